package htmlreport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/plot"
	"pslab/internal/report"
	"pslab/internal/report/claims"
)

// chromium is the browser the integration test drives (Debian's package;
// scripts/test.sh installs it).
const chromium = "/usr/bin/chromium"

// reproductionPage writes the HTML report of the committed reproduction,
// as `pslab report results/gaddah-kunz-repro --format html` does.
func reproductionPage(t *testing.T, path string) (*report.Dataset, int) {
	t.Helper()
	recs, err := report.ReadRecords("../../../results/gaddah-kunz-repro")
	require.NoError(t, err)
	d := report.Build(recs)
	doc := report.BuildDoc(d, claims.Check(d), []string{"results/gaddah-kunz-repro"})
	var figs []plot.Figure
	skipped, err := plot.Render(d, plot.Options{Figures: Figures, SVGOnly: true}, func(f plot.Figure) error {
		figs = append(figs, f)
		return nil
	})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteReport(&buf, d, doc, figs, skipped))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return d, len(figs)
}

// comparisonPage writes the HTML of `pslab compare` of the client-cost
// run before the batching pacer against the one after it, and returns
// how many warnings the comparison has.
func comparisonPage(t *testing.T, path string) (warnings int) {
	t.Helper()
	var sets []*report.Dataset
	a, b := "results/client-cost/records/before-r1", "results/client-cost/records/after-r1"
	for _, p := range []string{"../../../" + a, "../../../" + b} {
		recs, err := report.ReadRecords(p)
		require.NoError(t, err)
		sets = append(sets, report.Build(recs))
	}
	c := report.Compare(sets[0], sets[1], 0.1)
	require.NotEmpty(t, c.Rows)
	fig, err := plot.CompareFigure(c, plot.Options{SVGOnly: true}, "compare")
	require.NoError(t, err)
	var buf bytes.Buffer
	cr := report.NewCompareReport(c, a, b, report.Gate{FailOn: []string{report.FailDiffers}})
	require.NoError(t, WriteCompare(&buf, cr.Doc(), &fig))
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return len(c.Warnings())
}

// pageChecks runs in the page: what it holds, and sorting and filtering
// the rows as a reader would.
const pageChecks = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const r = {};
  r.firstSection = document.querySelector("main section").id;
  r.validityRows = q("#validity-table tbody tr").length;
  r.tables = q("table").length;
  r.svgs = q("figure svg").length;
  r.svgDrawn = q("figure svg").filter(s => s.getBoundingClientRect().width > 300).length;
  r.claims = q("details[id^=claim-]").length;
  r.rows = q("#rows-table tbody tr").length;
  r.flags = q("#flags-table tbody tr").length;
  r.meanings = q("#flags-table tbody tr").filter(tr => tr.cells[1].textContent.trim().length > 20).length;
  r.provenance = q("#provenance-table tbody tr").length;
  const th = q("#rows-table thead th").find(t => t.textContent.trim() === "sub msgs/s");
  th.click(); th.click();
  const vals = q("#rows-table tbody tr").map(tr => tr.cells[th.cellIndex].getAttribute("data-v")).filter(v => v !== "").map(Number);
  r.sortedValues = vals.length;
  r.sortedDescending = vals.every((v, i) => i === 0 || vals[i - 1] >= v) && vals[0] > vals[vals.length - 1];
  r.sortMark = th.getAttribute("aria-sort");
  const input = document.querySelector("[data-filter-for=rows-table] input[type=search]");
  input.value = "artemis wifi-paper";
  input.dispatchEvent(new Event("input"));
  r.filtered = q("#rows-table tbody tr").filter(tr => !tr.hidden).length;
  r.count = document.getElementById("rows-count").textContent;
  input.value = "";
  input.dispatchEvent(new Event("input"));
  const sel = document.querySelector("[data-filter-for=rows-table] select[name=broker]");
  sel.value = "nats";
  sel.dispatchEvent(new Event("change"));
  r.natsRows = q("#rows-table tbody tr").filter(tr => !tr.hidden).length;
  sel.value = "";
  sel.dispatchEvent(new Event("change"));
  const d = document.querySelector("details[id^=claim-]");
  d.open = true;
  r.claimItems = d.querySelectorAll("table.items tbody tr").length;
  r.claimHasP = /p<0\.001|p=0\.\d{3}/.test(d.textContent);
  d.open = false;
  window.scrollTo(0, 0);
  return r;
})()`

const compareChecks = `(() => {
  const q = s => Array.from(document.querySelectorAll(s));
  return {rows: q("#cmp-table tbody tr").length, svgs: q("figure svg").length, settings: q("#settings-table tbody tr").length,
    warnings: q(".warn").length, gate: document.querySelector("#summary").textContent.includes("Gate")};
})()`

// session is one page in the browser.
type session struct {
	b  *browser
	id string
}

func openPage(ctx context.Context, t *testing.T, b *browser, width, height int) session {
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	require.NoError(t, b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target))
	var att struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att))
	s := session{b: b, id: att.SessionID}
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		require.NoError(t, b.call(ctx, s.id, domain+".enable", nil, nil))
	}
	require.NoError(t, b.call(ctx, s.id, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil))
	return s
}

func (s session) navigate(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	before := s.b.eventCount()
	require.NoError(t, s.b.call(ctx, s.id, "Page.navigate", map[string]any{"url": "file://" + abs}, nil))
	require.NoError(t, s.b.waitEvent(ctx, s.id, "Page.loadEventFired", before))
}

func (s session) evaluate(ctx context.Context, t *testing.T, expr string, out any) {
	t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	require.NoError(t, s.b.call(ctx, s.id, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res))
	require.Nil(t, res.ExceptionDetails, "the checks threw: %+v", res.ExceptionDetails)
	require.NoError(t, json.Unmarshal(res.Result.Value, out))
}

func (s session) screenshot(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	require.NoError(t, s.b.call(ctx, s.id, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot))
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 1000)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	t.Logf("screenshot: %s", path)
}

// problems are the console errors, uncaught exceptions, error log entries
// and network requests (anything but the page's own file) of a session.
func problems(b *browser, session string) []string {
	var out []string
	for _, e := range b.Events() {
		if e.SessionID != session {
			continue
		}
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string            `json:"type"`
				Args []json.RawMessage `json:"args"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "assert" || p.Type == "warning" {
				out = append(out, fmt.Sprintf("console.%s: %s", p.Type, p.Args))
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Text, URL string
				} `json:"entry"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
			}
		case "Network.requestWillBeSent":
			var p struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if u := p.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
				out = append(out, "network fetch: "+u)
			}
		}
	}
	return out
}

// The HTML report of the committed reproduction in a real browser
// (headless Chromium, driven over the DevTools protocol): it opens with
// the validity table, holds the rows, claims, flags and figures, sorts and
// filters, fetches nothing and logs no error; a screenshot is kept
// (PSLAB_SCREENSHOTS=DIR keeps it there). The committed REPORT.html and
// the comparison page likewise.
func TestReportInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := exec.LookPath(chromium); err != nil {
		t.Fatalf("%s not found: install Debian's chromium (apt-get install -y chromium; scripts/test.sh does)", chromium)
	}
	dir := t.TempDir()
	shots := os.Getenv("PSLAB_SCREENSHOTS")
	if shots == "" {
		shots = dir
	}
	reportHTML, compareHTML := filepath.Join(dir, "REPORT.html"), filepath.Join(dir, "compare.html")
	d, nfigs := reproductionPage(t, reportHTML)
	// The rows as the report builds them: a row whose records mix pslab
	// builds or broker configurations is one row per identity (138 of the
	// reproduction's 200 rows are split so).
	artemisWifi, natsRows := 0, 0
	for _, g := range d.Groups {
		if g.Broker == "artemis" && g.Network == "wifi-paper" {
			artemisWifi++
		}
		if g.Broker == "nats" {
			natsRows++
		}
	}
	warnings := comparisonPage(t, compareHTML)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := startBrowser(chromium, filepath.Join(dir, "profile"))
	require.NoError(t, err)
	defer b.close()

	s := openPage(ctx, t, b, 1400, 1000)
	s.navigate(ctx, t, reportHTML)
	var got struct {
		FirstSection                       string
		ValidityRows, Tables, Svgs         int
		SvgDrawn, Claims, Rows, Flags      int
		Meanings, Provenance, SortedValues int
		SortedDescending                   bool
		SortMark                           string
		Filtered, NatsRows, ClaimItems     int
		Count                              string
		ClaimHasP                          bool
	}
	s.evaluate(ctx, t, pageChecks, &got)
	t.Logf("page: %+v", got)
	assert.Equal(t, "validity", got.FirstSection, "the page opens with the validity table")
	assert.Equal(t, 4, got.ValidityRows, "2 brokers x 2 networks")
	assert.Equal(t, len(d.Groups), got.Rows, "every case x broker x network")
	assert.Greater(t, got.Rows, 200, "the paper's 200 rows, those that mix builds split")
	assert.Equal(t, nfigs, got.Svgs, "every figure drawn, inline")
	assert.GreaterOrEqual(t, got.Svgs, 14, "Figures 8-14 and latency per broker")
	assert.Equal(t, got.Svgs, got.SvgDrawn, "every figure is laid out")
	assert.Equal(t, 29, got.Claims)
	assert.Positive(t, got.ClaimItems)
	assert.True(t, got.ClaimHasP, "a claim opens to its items' p-values")
	assert.Positive(t, got.Flags)
	assert.Equal(t, got.Flags, got.Meanings, "every flag with its meaning")
	assert.Positive(t, got.Provenance)
	assert.True(t, got.SortedDescending, "sorted by sub throughput, descending")
	assert.Equal(t, "descending", got.SortMark)
	assert.Equal(t, len(d.Groups), got.SortedValues)
	assert.Equal(t, artemisWifi, got.Filtered, "artemis over wifi-paper")
	assert.Equal(t, fmt.Sprintf("%d of %d rows", artemisWifi, len(d.Groups)), got.Count)
	assert.Equal(t, natsRows, got.NatsRows)
	s.screenshot(ctx, t, filepath.Join(shots, "report-top.png"))
	s.evaluate(ctx, t, `(() => { document.getElementById("rows").scrollIntoView(); return 0; })()`, new(int))
	s.screenshot(ctx, t, filepath.Join(shots, "report-rows.png"))
	s.evaluate(ctx, t, `(() => { document.getElementById("figures").scrollIntoView(); return 0; })()`, new(int))
	s.screenshot(ctx, t, filepath.Join(shots, "report-figures.png"))
	assert.Empty(t, problems(b, s.id), "console errors, exceptions or network fetches")

	// The committed page (results/gaddah-kunz-repro/REPORT.html) loads the
	// same way.
	committed := openPage(ctx, t, b, 1400, 1000)
	committed.navigate(ctx, t, "../../../results/gaddah-kunz-repro/REPORT.html")
	var kept struct{ Rows, Svgs int }
	committed.evaluate(ctx, t, `({rows: document.querySelectorAll("#rows-table tbody tr").length, svgs: document.querySelectorAll("figure svg").length})`, &kept)
	assert.Equal(t, got.Rows, kept.Rows, "the committed REPORT.html")
	assert.Equal(t, got.Svgs, kept.Svgs, "the committed REPORT.html")
	assert.Empty(t, problems(b, committed.id), "console errors, exceptions or network fetches")

	c := openPage(ctx, t, b, 1400, 1000)
	c.navigate(ctx, t, compareHTML)
	var cmp struct {
		Rows, Svgs, Settings, Warnings int
		Gate                           bool
	}
	c.evaluate(ctx, t, compareChecks, &cmp)
	t.Logf("compare: %+v", cmp)
	assert.Equal(t, 3, cmp.Rows, "the client-cost cases: NATS saturating and at 50,000 msg/s, Artemis at 2,000 msg/s")
	assert.Equal(t, 1, cmp.Svgs)
	assert.Equal(t, warnings, cmp.Warnings, "every warning of the comparison shown")
	assert.True(t, cmp.Gate)
	c.screenshot(ctx, t, filepath.Join(shots, "compare.png"))
	assert.Empty(t, problems(b, c.id), "console errors, exceptions or network fetches")
}
