package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/report"
	"pslab/internal/results"
)

// testdata/records.jsonl: made-up measurements for the cases of Figures
// 8-14 with the paper's values: broker nats on both networks (two
// repetitions, a zero on wifi-paper in case 28, a flag on case 07),
// broker artemis on the wireline only.
func fixture(t *testing.T) *report.Dataset {
	t.Helper()
	recs, err := report.ReadRecords("testdata/records.jsonl")
	require.NoError(t, err)
	return report.Build(recs)
}

func TestParseFigures(t *testing.T) {
	all, err := ParseFigures("all")
	require.NoError(t, err)
	assert.Equal(t, []string{"8", "9", "10", "11", "12", "13", "14", Latency, Series, Resources, Sweep}, all)
	got, err := ParseFigures("fig08, 14,latency,8")
	require.NoError(t, err)
	assert.Equal(t, []string{"8", "14", "latency"}, got)
	for _, bad := range []string{"7", "15", "nine", "8,x"} {
		_, err := ParseFigures(bad)
		assert.Error(t, err, bad)
	}
}

func TestGenerateAll(t *testing.T) {
	dir := t.TempDir()
	// A low resolution keeps the test fast (rasterising dominates under -race).
	out, err := Generate(fixture(t), Options{OutDir: dir, DPI: 40})
	require.NoError(t, err)
	var want []string
	for _, b := range []string{"artemis", "nats"} {
		for _, f := range []string{"fig08-gaddah-kunz-set1", "fig09-gaddah-kunz-set1", "fig10-gaddah-kunz-set1", "fig11-gaddah-kunz-set1",
			"fig12-gaddah-kunz-set2", "fig13-gaddah-kunz-set2", "fig14-gaddah-kunz-set2", "latency-gaddah-kunz-set1", "latency-gaddah-kunz-set2"} {
			want = append(want, f+"-"+b)
		}
		want = append(want, "series-gaddah-kunz-set1-"+b+"-wireline", "series-gaddah-kunz-set2-"+b+"-wireline")
	}
	want = append(want, "series-gaddah-kunz-set1-nats-wifi-paper", "series-gaddah-kunz-set2-nats-wifi-paper")
	assert.Len(t, out.Files, 2*len(want))
	for _, w := range want {
		checkPNG(t, filepath.Join(dir, w+".png"))
		checkSVG(t, filepath.Join(dir, w+".svg"))
	}
	// The fixture covers every figure but the soak's and the sweep's, and says so.
	assert.Equal(t, []string{"resources: no record with a window of at least 300 s (a soak)",
		"sweep: no suite in the results comes from a sweep (its records name no varied values)"}, out.Skipped)
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, path)
	assert.Greater(t, len(data), 8_000, "%s looks empty", path)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err, path)
	assert.Greater(t, cfg.Width, 300, path)
	assert.Greater(t, cfg.Height, 150, path)
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err, path)
	assert.Greater(t, len(data), 5_000, "%s looks empty", path)
	dec := xml.NewDecoder(bytes.NewReader(data))
	elems := 0
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s is not well-formed XML", path)
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			elems++
		}
	}
	assert.Equal(t, "svg", root, path)
	assert.Greater(t, elems, 50, path)
}

func TestGenerateSelectedAndMissing(t *testing.T) {
	d := fixture(t)
	// Only the set 2 records: Figures 8-11 have no cases, and say so.
	var set2 []results.Record
	for _, g := range d.Groups {
		if g.Suite == "gaddah-kunz-set2" {
			for _, r := range g.Records {
				set2 = append(set2, *r)
			}
		}
	}
	dir := t.TempDir()
	out, err := Generate(report.Build(set2), Options{OutDir: dir, Figures: []string{"8", "11", "14"}})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "fig14-gaddah-kunz-set2-artemis.png"), filepath.Join(dir, "fig14-gaddah-kunz-set2-artemis.svg"),
		filepath.Join(dir, "fig14-gaddah-kunz-set2-nats.png"), filepath.Join(dir, "fig14-gaddah-kunz-set2-nats.svg")}, out.Files)
	require.Len(t, out.Skipped, 2)
	assert.Contains(t, out.Skipped[0], "figure 8")
	assert.Contains(t, out.Skipped[0], "no suite in the results has its cases")
	assert.Contains(t, out.Skipped[1], "figure 11")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 4, "nothing written for skipped figures")
}

func TestFigureData(t *testing.T) {
	d := fixture(t)
	// Artemis has wireline records only: panel (b) has the paper's values
	// and no measurement.
	panels := figureData(d, figureSpecs[8], "gaddah-kunz-set1", "artemis")
	require.Len(t, panels, 2)
	assert.Equal(t, report.Wireline, panels[0].network)
	assert.Equal(t, 16, panels[0].measured) // 4 N x 4 series
	assert.Equal(t, 16, panels[0].published)
	assert.Equal(t, 0, panels[1].measured)
	assert.Equal(t, 16, panels[1].published)
	var labels []string
	for _, c := range panels[0].cats {
		labels = append(labels, c.label)
	}
	assert.Equal(t, []string{"1×2", "50×2", "200×2", "400×2"}, labels)

	// Figure 14 draws the corrected reading of case 17, not the printed 46731.
	p14 := figureData(d, figureSpecs[14], "gaddah-kunz-set2", "nats")[0]
	require.Len(t, p14.cats, 2)
	assert.Equal(t, "ObjectMessage", p14.cats[1].label)
	assert.Equal(t, 467.31, p14.cats[1].values[1].paper)

	// The measured zero of case 28 on wifi-paper is counted, not drawn.
	p11 := figureData(d, figureSpecs[11], "gaddah-kunz-set1", "nats")[1]
	_, _, dropped := panelRange(p11)
	assert.Equal(t, 1, dropped)
}

// A row that mixes builds is split into parts ("01 ⟨1 of 2⟩"); the bare
// case id then has no records in that network. The panel still draws the
// measurement, from the part with the most repetitions, and says so.
func TestSplitRowsAreDrawn(t *testing.T) {
	recs, err := report.ReadRecords("testdata/records.jsonl")
	require.NoError(t, err)
	var split, wireline []results.Record
	parts := map[string]int{}
	for _, r := range recs {
		if r.Broker != "nats" {
			continue
		}
		if r.Network.Profile != report.Wireless {
			wireline = append(wireline, r) // one build: the bare case ids stay
			continue
		}
		key := r.Suite + r.CaseID
		r.Versions.Pslab = "build-a"
		if parts[key] > 0 {
			r.Versions.Pslab = "build-b"
		}
		parts[key]++
		split = append(split, r)
	}
	require.NotEmpty(t, split)
	// One more repetition of build-b, so that part has the most.
	var extra []results.Record
	for _, r := range split {
		if r.Versions.Pslab == "build-b" {
			r.Rep += 10
			extra = append(extra, r)
		}
	}
	d := report.Build(append(append(wireline, split...), extra...))
	whole := figureData(fixture(t), figureSpecs[8], "gaddah-kunz-set1", "nats")[1]
	p := figureData(d, figureSpecs[8], "gaddah-kunz-set1", "nats")[1]
	require.NotZero(t, whole.measured)
	assert.Equal(t, whole.measured, p.measured, "every measured value is drawn, from a part")
	for _, cat := range p.cats {
		for _, v := range cat.values {
			if v.hasMeasured {
				assert.Contains(t, v.caseID, "⟨2 of 2⟩", "the part with the most repetitions (build-b)")
			}
		}
	}
	assert.Contains(t, figureNote(figureSpecs[8], []*panel{p}), "the part with the most repetitions is drawn")
}

func TestQuickRecordsDrawNoPaperValues(t *testing.T) {
	recs, err := report.ReadRecords("testdata/records.jsonl")
	require.NoError(t, err)
	for i := range recs {
		recs[i].Quick = true
	}
	d := report.Build(recs)
	for _, p := range figureData(d, figureSpecs[10], "gaddah-kunz-set1", "nats") {
		assert.True(t, p.quick)
		assert.Zero(t, p.published, "counts of quick records may be reduced: no paper reference")
		assert.NotZero(t, p.measured)
	}
	dir := t.TempDir()
	out, err := Generate(d, Options{OutDir: dir, Figures: []string{"10"}})
	require.NoError(t, err)
	require.Len(t, out.Files, 4)
	svg, err := os.ReadFile(filepath.Join(dir, "fig10-gaddah-kunz-set1-nats.svg"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(svg), "QUICK RUN"), "the figure says it is a quick run")
}

func TestLogTicks(t *testing.T) {
	ts := logTicks{}.Ticks(0.3, 4000)
	var labels []string
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"1", "10", "100", "1k"}, labels)
	ts = logTicks{}.Ticks(8, 300)
	labels = nil
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"10", "20", "50", "100", "200"}, labels)
	// A CI over ten decades (two repetitions): every other decade is
	// labelled, no minor ticks, 1 among them.
	ts = logTicks{}.Ticks(2.37e-5, 1.26e6)
	labels = nil
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.0001", "0.01", "1", "100", "10k", "1M"}, labels)
	assert.Len(t, ts, 11, "one tick per decade (1e-4 to 1e6), no minor ticks")
}
