package htmlreport

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/plot"
	"pslab/internal/report"
	"pslab/internal/report/claims"
)

// fetches finds what would make a browser fetch something: a src or href
// outside the page, a stylesheet import, a url() that is not data:.
var fetches = regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//)[^"]*"|@import|url\(\s*['"]?(https?:|//)`)

// The page of a small dataset: its sections in order, its figures inline,
// and nothing it would fetch.
func TestReportPage(t *testing.T) {
	recs, err := report.ReadRecords("../testdata/table.jsonl")
	require.NoError(t, err)
	d := report.Build(recs)
	doc := report.BuildDoc(d, claims.Check(d), []string{"testdata/table.jsonl"})
	var figs []plot.Figure
	skipped, err := plot.Render(d, plot.Options{Figures: []string{plot.Latency}, SVGOnly: true}, func(f plot.Figure) error {
		figs = append(figs, f)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, figs)
	var buf bytes.Buffer
	require.NoError(t, WriteReport(&buf, d, doc, figs, skipped))
	page := buf.String()
	var at []int
	for _, id := range []string{`id="validity"`, `id="provenance"`, `id="claims"`, `id="rows"`, `id="figures"`, `id="flags"`} {
		i := strings.Index(page, id)
		require.GreaterOrEqual(t, i, 0, id)
		at = append(at, i)
	}
	for i := 1; i < len(at); i++ {
		assert.Less(t, at[i-1], at[i], "sections in order: validity first")
	}
	assert.Equal(t, len(figs), strings.Count(page, "<svg "), "every figure inline")
	assert.False(t, strings.Contains(page, "<?xml"), "SVG files' headers are not in the page")
	assert.Empty(t, fetches.FindAllString(page, -1), "nothing fetched")
	assert.True(t, strings.Contains(page, `<table id="rows-table" class="sortable">`))
	assert.True(t, strings.Contains(page, report.FlagMeaning("drain-incomplete")), "flags with their meanings")
	assert.Equal(t, len(d.Groups), strings.Count(page, "<tr data-suite="), "a row per case x broker x network")
	assert.False(t, strings.Contains(page, "NaN"))
}

// The comparison page: warnings, the gate and every row.
func TestComparePage(t *testing.T) {
	recs, err := report.ReadRecords("../testdata/table.jsonl")
	require.NoError(t, err)
	a, b := report.Build(recs), report.Build(recs)
	c := report.Compare(a, b, 0.1)
	cr := report.NewCompareReport(c, "A", "B", report.Gate{FailOn: []string{report.FailSettings}})
	fig, err := plot.CompareFigure(c, plot.Options{SVGOnly: true}, "compare")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteCompare(&buf, cr.Doc(), &fig))
	page := buf.String()
	assert.True(t, strings.Contains(page, "are the same"))
	assert.True(t, strings.Contains(page, "Gate failed"))
	assert.Equal(t, len(c.Rows), strings.Count(page, "<tr data-suite="))
	assert.Equal(t, 1, strings.Count(page, "<svg "))
	assert.Empty(t, fetches.FindAllString(page, -1))
}
