package plot

import (
	"bytes"
	"encoding/xml"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/report"
)

func comparison() report.Comparison {
	row := func(suite, id string, sub, lat report.RatioCI) report.CompareRow {
		return report.CompareRow{Key: report.GroupKey{Suite: suite, Case: id, Broker: "artemis", Network: "wifi-paper"}, Sub: sub, Lat: lat}
	}
	ci := func(r, lo, hi float64) report.RatioCI { return report.RatioCI{Ratio: r, Lo: lo, Hi: hi, P: 0.01} }
	return report.Comparison{Margin: 0.1, Rows: []report.CompareRow{
		row("a-rather-long-suite-name-set1", "01", ci(0.5, 0.4, 0.6), ci(1449, 1300, 1620)),
		row("a-rather-long-suite-name-set1", "02", ci(2, 1.5, math.Inf(1)), ci(0.9, 0.1, 8)),
		row("s", "03", report.RatioCI{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, ci(1, 0.9, 1.1)),
	}}
}

// Every ratio and finite CI bound is inside its axis with a margin, and an
// infinite bound leaves the axis finite.
func TestComparePanelAxesHoldEveryPoint(t *testing.T) {
	c := comparison()
	sub := ratioPanel("sub", c, func(r report.CompareRow) report.RatioCI { return r.Sub })
	lat := ratioPanel("lat", c, func(r report.CompareRow) report.RatioCI { return r.Lat })
	assert.Less(t, sub.X.Min, 0.4/1.1)
	assert.Greater(t, sub.X.Max, 2*1.1)
	assert.False(t, math.IsInf(sub.X.Max, 0))
	assert.Less(t, lat.X.Min, 0.1/1.1)
	assert.Greater(t, lat.X.Max, 1620*1.2, "the largest CI bound is not on the border")
}

// The row labels are drawn whole: every text of the figure starts inside
// it (they were cut off at the left edge).
func TestCompareFigureLabelsAreNotClipped(t *testing.T) {
	fig, err := CompareFigure(comparison(), Options{DPI: 40}, "compare")
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(fig.SVG))
	labels := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "text" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local == "x" {
				x, err := strconv.ParseFloat(a.Value, 64)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, x, 0.0, "text starting at x=%v", x)
			}
		}
		if text, err := dec.Token(); err == nil {
			if cd, ok := text.(xml.CharData); ok && strings.HasPrefix(string(cd), "a-rather-long-suite-name-set1 0") {
				labels++
			}
		}
	}
	assert.Equal(t, 2, labels, "each row labelled once")
	assert.NotEmpty(t, fig.PNG)
}
