package model

import (
	"fmt"
	"io"
	"math"
	"strings"
)

func us(s float64) string { return fmt.Sprintf("%.4g", s*1e6) }

func se(s float64) string { return fmt.Sprintf("%.2g", s*1e6) }

func pm(p Param) string {
	if p.StdErr > 0 {
		return fmt.Sprintf("%s = %s ± %s", p.Symbol, us(p.Value), se(p.StdErr))
	}
	return fmt.Sprintf("%s = %s", p.Symbol, us(p.Value))
}

// WriteFitMarkdown prints a Report for people: per broker and network the
// fits with standard errors and goodness of fit, the best form, and what a
// message, a filter and a dispatched copy cost.
func WriteFitMarkdown(w io.Writer, r Report) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Service-time model fits\n\n")
	used := 0
	for _, g := range r.Groups {
		used += g.N
	}
	p("Records: %d from %s; %d used", r.Records, strings.Join(r.Sources, ", "), used)
	if len(r.Skipped) > 0 {
		var s []string
		for _, c := range r.Skipped {
			s = append(s, fmt.Sprintf("%d %s", c.Count, c.Reason))
		}
		p("; skipped: %s", strings.Join(s, ", "))
	}
	p(".\n\n")
	switch r.Response {
	case Demand:
		p("Response: B = broker CPU seconds per received message (utilisation law); ")
	default:
		p("Response: B = 1 / received throughput (pub_tput), the papers' definition: valid only where the broker was the bottleneck; ")
	}
	if r.Weighting == Unweighted {
		p("ordinary least squares on B. RSE is in µs.\n\n")
	} else {
		p("weighted least squares with weights 1/B² (relative errors). RSE is relative.\n\n")
	}
	p("Times in µs ± one standard error. rel. RMS and max: root mean square and largest error of the model's 1/B (the received throughput at capacity) relative to the measured one.\n")
	for _, g := range r.Groups {
		p("\n## %s over %s%s\n\n", g.Broker, orDash(g.Network), filterTitle(g.Filter))
		p("%d observations", g.N)
		if g.BrokerCPU > 0 {
			p(", broker CPU %.0f %% of one core on average", 100*g.BrokerCPU)
		}
		p(".\n\n")
		p("| form | parameters (µs) | R² | adj. R² | RSE | rel. RMS | max | %s | Δ |\n|---|---|---|---|---|---|---|---|---|\n", g.Criterion)
		for _, f := range g.Fits {
			if f.Error != "" {
				p("| %s | refused: %s | | | | | | | |\n", f.Form, strings.ReplaceAll(f.Error, "|", "/"))
				continue
			}
			var ps []string
			for _, q := range f.Params {
				ps = append(ps, pm(q))
			}
			rse := fmt.Sprintf("%.3g", f.RSE)
			if r.Weighting == Unweighted {
				rse = us(f.RSE)
			}
			crit := fmt.Sprintf("%.1f", f.AIC)
			if g.Criterion == "AICc" && f.AICc != nil {
				crit = fmt.Sprintf("%.1f", *f.AICc)
			}
			delta := ""
			if f.Delta != nil {
				delta = fmt.Sprintf("%.1f", *f.Delta)
			}
			p("| %s | %s | %.4f | %.4f | %s | %.1f %% | %.1f %% | %s | %s |\n", f.Form, strings.Join(ps, ", "),
				f.R2, f.AdjR2, rse, 100*f.RelRMS, 100*f.MaxRelErr, crit, delta)
		}
		for _, f := range g.Fits {
			if f.Collinear != "" {
				p("\nWarning, %s: %s.\n", f.Form, f.Collinear)
			}
		}
		if g.Best == "" {
			p("\nNo form could be fitted (reasons in the table).\n")
			continue
		}
		p("\nBest form: **%s** (%s).\n", g.Best, g.Why)
		for _, f := range g.Fits {
			if f.Form == g.Best {
				p("\n%s", costs(f, r.Response))
				p("%s", publishedFor(f.Form))
			}
		}
	}
	writeSkippedRuns(p, r.SkippedRuns)
	_, err := io.WriteString(w, b.String())
	return err
}

// maxSkippedListed bounds the list of skipped runs in the markdown (the
// JSON has them all).
const maxSkippedListed = 60

func writeSkippedRuns(p func(string, ...any), skips []Skip) {
	if len(skips) == 0 {
		return
	}
	p("\n## Runs left out\n\n| run | reason | detail |\n|---|---|---|\n")
	for i, s := range skips {
		if i == maxSkippedListed {
			p("| … | %d more (all in --format json) | |\n", len(skips)-maxSkippedListed)
			break
		}
		p("| %s | %s | %s |\n", s.Source, s.Reason, strings.ReplaceAll(s.Detail, "|", "/"))
	}
}

// costs says in words what a message, a filter and a copy cost.
func costs(f FitReport, resp Response) string {
	what := "of broker time at capacity"
	if resp == Demand {
		what = "of broker CPU"
	}
	byName := map[string]Param{}
	for _, p := range f.Params {
		byName[p.Symbol] = p
	}
	var s []string
	s = append(s, fmt.Sprintf("- a received message: %s µs (t_rcv)", usPM(byName["t_rcv"])))
	switch f.Form {
	case "fiorano":
		s = append(s, fmt.Sprintf("- a filter: %s µs per message it is checked against (t_fltr)", usPM(byName["t_fltr"])))
	case "sunmq":
		s = append(s, fmt.Sprintf("- a filter: %s µs per message (t_fltr_all), plus %s µs if it differs from the others (t_fltr_diff)",
			usPM(byName["t_fltr_all"]), usPM(byName["t_fltr_diff"])))
	case "websphere":
		t := byName["t_fltr"]
		s = append(s, fmt.Sprintf("- filters: n filters cost n·√n·%s µs per message; the 10th adds %s µs, the 100th %s µs",
			usPM(t), us(t.Value*(math.Pow(10, 1.5)-math.Pow(9, 1.5))), us(t.Value*(math.Pow(100, 1.5)-math.Pow(99, 1.5)))))
	}
	if t, ok := byName["t_tx"]; ok {
		s = append(s, fmt.Sprintf("- a subscriber that gets the message (one dispatched copy, replication): %s µs (t_tx)", usPM(t)))
	} else {
		s = append(s, "- a dispatched copy: no term in this form")
	}
	return fmt.Sprintf("Costs %s (%s):\n\n%s\n", what, f.Form, strings.Join(s, "\n"))
}

func usPM(p Param) string {
	if p.StdErr > 0 {
		return us(p.Value) + " ± " + se(p.StdErr)
	}
	return us(p.Value)
}

func publishedFor(form string) string {
	var s []string
	for _, p := range PublishedSets() {
		if p.Form.Name() != form {
			continue
		}
		var ps []string
		for _, q := range p.Form.Params() {
			ps = append(ps, pm(q))
		}
		s = append(s, fmt.Sprintf("- %s: %s µs (%s)", p.Name, strings.Join(ps, ", "), p.Source))
	}
	if len(s) == 0 {
		return ""
	}
	return fmt.Sprintf("\nPublished for comparison (2005 hardware and JMS servers, not this broker):\n\n%s\n", strings.Join(s, "\n"))
}

// filterTitle names a group's filter kind in its heading.
func filterTitle(kind string) string {
	switch kind {
	case "":
		return ""
	case "none":
		return ", no filters"
	case "selector":
		return ", selector (20-of-100 range)"
	}
	return ", " + kind + " filters"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LabeledPrediction is a prediction with the name of the parameter set.
type LabeledPrediction struct {
	Set string `json:"set"`
	Prediction
}

// WritePredictionsMarkdown prints predictions as a table.
func WritePredictionsMarkdown(w io.Writer, ps []LabeledPrediction) error {
	var b strings.Builder
	b.WriteString("| parameters | n_fltr | n_diff | r | B (µs) | received (msgs/s) | dispatched (msgs/s) | overall (msgs/s) |\n|---|---|---|---|---|---|---|---|\n")
	val := func(v, se float64, has bool, f string) string {
		if has {
			return fmt.Sprintf(f+" ± %.2g", v, se)
		}
		return fmt.Sprintf(f, v)
	}
	for _, p := range ps {
		nd := "-"
		if p.NDistinct > 0 {
			nd = fmt.Sprintf("%g", p.NDistinct)
		}
		fmt.Fprintf(&b, "| %s | %g | %s | %g | %s | %s | %s | %s |\n", p.Set, p.NFilters, nd, p.R,
			val(p.B*1e6, p.BStdErr*1e6, p.HasStdErr, "%.4g"), val(p.Received, p.ReceivedStdErr, p.HasStdErr, "%.1f"),
			val(p.Dispatched, p.DispatchedStdErr, p.HasStdErr, "%.1f"), val(p.Overall, p.OverallStdErr, p.HasStdErr, "%.1f"))
	}
	b.WriteString("\nreceived = 1/B, dispatched = r/B, overall = (1+r)/B (the papers' overall throughput). ± is one standard error from the fit's parameter covariance (delta method); published parameters carry none.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCostSummary prints one row per broker, network and filter kind:
// what a received message, a filter and a dispatched copy cost by the
// fiorano form (t_rcv, t_fltr, t_tx, the papers' Equation 1), with its fit
// quality, and which form fitted best.
func WriteCostSummary(w io.Writer, r Report) error {
	var b strings.Builder
	what := "broker time per message at capacity (B = 1/received throughput)"
	if r.Response == Demand {
		what = "broker CPU per message (B = broker CPU s / received message)"
	}
	fmt.Fprintf(&b, "Costs in µs ± one standard error, %s, fiorano form B = t_rcv + n_fltr·t_fltr + r·t_tx:\n\n", what)
	b.WriteString("| broker | network | filters | runs | message t_rcv | filter t_fltr | subscriber t_tx | R² | rel. RMS | best form |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, g := range r.Groups {
		var fio *FitReport
		for i := range g.Fits {
			if g.Fits[i].Form == "fiorano" {
				fio = &g.Fits[i]
			}
		}
		head := fmt.Sprintf("| %s | %s | %s | %d |", g.Broker, orDash(g.Network), orDash(g.Filter), g.N)
		if fio == nil || fio.Error != "" {
			why := "not fitted"
			if fio != nil {
				why = "refused: " + strings.ReplaceAll(fio.Error, "|", "/")
			}
			fmt.Fprintf(&b, "%s %s | | | | | %s |\n", head, why, orDash(g.Best))
			continue
		}
		ps := map[string]Param{}
		for _, p := range fio.Params {
			ps[p.Symbol] = p
		}
		fmt.Fprintf(&b, "%s %s | %s | %s | %.3f | %.1f %% | %s |\n", head, usPM(ps["t_rcv"]), usPM(ps["t_fltr"]), usPM(ps["t_tx"]),
			fio.R2, 100*fio.RelRMS, orDash(g.Best))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
