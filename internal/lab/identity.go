package lab

import (
	"fmt"
	"io"

	"pslab/internal/broker"
	"pslab/internal/results"
)

// One configuration per run (issue 31): every record names the pslab
// build that made it (versions.pslab) and the hash of the broker's
// effective configuration (broker_config). A resumed run counts the
// finished records of its rows only when both are the same as now; the
// others are set aside in records.superseded.jsonl and their rows start
// over, unless the resume was forced (--force, Options.ForceMixed), and
// then the rows mix, which the report says.

// configOf is the hash of b's effective configuration (broker.Configured),
// empty when the broker cannot say (an external broker) or failed to.
func configOf(b broker.Broker, log io.Writer) string {
	c, ok := b.(broker.Configured)
	if !ok {
		return ""
	}
	settings, files, err := c.EffectiveConfig()
	if err != nil {
		fmt.Fprintf(log, "warning: %s: its effective configuration is not known, records carry no broker_config: %v\n", b.Name(), err)
		return ""
	}
	return results.ConfigHash(settings, files)
}

// setAsideOtherBuilds returns the finished records of a resumed run that
// count: those made by this pslab build (all of them with ForceMixed),
// and those set aside: the others, moved to records.superseded.jsonl
// (their repetition numbers stay taken), and said.
func setAsideOtherBuilds(b *results.Bundle, o Options, log io.Writer) (kept, aside []results.Record, err error) {
	build := Version()
	other := func(r *results.Record) bool { return r.Versions.Pslab != build }
	return setAsideFinished(b, o, other, log, fmt.Sprintf("made by another pslab build than this one (%s)", build))
}

// setAsideFinished moves the finished records for which other holds out
// of the bundle (unless ForceMixed) and returns those left and those
// moved.
func setAsideFinished(b *results.Bundle, o Options, other func(*results.Record) bool, log io.Writer, why string) (kept, aside []results.Record, err error) {
	builds := map[string]int{}
	for i := range o.Finished {
		r := &o.Finished[i]
		if other(r) {
			builds[r.IdentityOf().String()]++
			if !o.ForceMixed {
				aside = append(aside, *r)
				continue
			}
		}
		kept = append(kept, *r)
	}
	if len(builds) == 0 {
		return o.Finished, nil, nil
	}
	if o.ForceMixed {
		fmt.Fprintf(log, "note: --force: finished records %s count toward their rows (%v): those rows mix, and the report says so\n", why, builds)
		return kept, nil, nil
	}
	n, err := b.SetAside(func(r *results.Record) bool { return r.Finished() && other(r) })
	if err != nil {
		return nil, nil, fmt.Errorf("set aside records %s: %w", why, err)
	}
	fmt.Fprintf(log, "%d finished record(s) %s (%v) set aside in %s: their rows start over (resume with --force to count them, mixing)\n",
		n, why, builds, results.SupersededFile)
	return kept, aside, nil
}

// setAsideOtherConfigs, once broker bName runs on network net with
// configuration config, sets aside the finished records of its rows made
// with another configuration (unless ForceMixed) and rebuilds the rows
// without them.
func (lr *labRun) setAsideOtherConfigs(s *schedule, bName, net, config string) error {
	mine := func(r *results.Record) bool {
		return r.Suite == lr.p.Suite.Name && r.Broker == bName && r.Network.Profile == net
	}
	other := func(r *results.Record) bool { return mine(r) && r.BrokerConfig != config }
	kept, _, err := setAsideFinished(lr.bundle, lr.o, other, lr.o.Log,
		fmt.Sprintf("of %s on %s made with another broker configuration than now (%s)", bName, net, config))
	if err != nil {
		return err
	}
	s.rebuild(kept)
	return nil
}

// rebuild counts the rows' finished records again, keeping only those in
// kept (by repetition: a row's records are told apart by their rep).
func (s *schedule) rebuild(kept []results.Record) {
	type key struct {
		c   string
		rep int
	}
	keep := map[key]bool{}
	for _, r := range kept {
		keep[key{r.CaseID, r.Rep}] = true
	}
	for _, r := range s.rows {
		recs := r.recs
		used := r.used
		*r = row{c: r.c, used: map[int]bool{}}
		for i := range recs {
			if keep[key{recs[i].CaseID, recs[i].Rep}] {
				r.add(&recs[i])
			}
		}
		for rep := range used { // numbers stay taken: records set aside keep theirs
			r.used[rep] = true
		}
	}
}

// sameConfig checks that every parallel lab runs broker bName with one
// configuration: the first lab to get here sets aside the finished
// records of another one (setAsideOtherConfigs); a lab whose broker runs
// a configuration other than the first lab's stops the run.
func (sh *sharedSchedule) sameConfig(lr *labRun, bName, net, config string) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.configSet {
		sh.configSet, sh.config = true, config
		return lr.setAsideOtherConfigs(sh.s, bName, net, config)
	}
	if config != sh.config {
		return fmt.Errorf("%s runs with broker configuration %s, another lab of this run with %s: one run must have one configuration (compare the instances' files, e.g. broker.xml)", bName, config, sh.config)
	}
	return nil
}
