package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tableDataset(t *testing.T) *Dataset {
	t.Helper()
	recs, err := ReadRecords("testdata/table.jsonl")
	require.NoError(t, err)
	return Build(recs)
}

func TestBuild(t *testing.T) {
	d := tableDataset(t)
	assert.Equal(t, []string{"tbl"}, d.Suites)
	assert.Equal(t, []string{Wireline, Wireless}, d.Networks)
	assert.Equal(t, 6, d.Records)
	assert.Equal(t, 1, d.Failed)

	wl := d.Get("tbl", "01", "nats", Wireline)
	require.NotNil(t, wl)
	assert.Equal(t, 2, wl.Reps)
	assert.InDelta(t, 1050, wl.Pub.Mean, 1e-9)
	assert.InDelta(t, 1040, wl.Sub.Mean, 1e-9)
	// Two values 990 and 1090: s = 70.71, t(0.975,1) = 12.706: half-width 635.3.
	assert.InDelta(t, 635.3, wl.Sub.CI, 0.1)

	wi := d.Get("tbl", "01", "nats", Wireless)
	require.NotNil(t, wi)
	assert.Equal(t, 1, wi.Reps)
	assert.True(t, math.IsNaN(wi.Sub.CI))
	require.Len(t, wi.Failed, 1)
	assert.Contains(t, wi.Failed[0].Error, "timeout")
	assert.Equal(t, 1, wi.Flags["drain-incomplete"])

	// Ordered numerically by case id.
	var ids []string
	for _, g := range d.Cases("tbl") {
		ids = append(ids, g.Case)
	}
	assert.Equal(t, []string{"01", "03", "17"}, ids)
	assert.Nil(t, d.Get("tbl", "99", "nats", Wireline))
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "3362", FormatNum(3361.6))
	assert.Equal(t, "78.4", FormatNum(78.4))
	assert.Equal(t, "1.25", FormatNum(1.25))
	assert.Equal(t, "–", FormatNum(math.NaN()))
	assert.Equal(t, "49.4 (n=1, no CI)", FormatStat(Stat{Mean: 49.4, CI: math.NaN(), N: 1}))
	assert.Equal(t, "49.4 ± 2.10", FormatStat(Stat{Mean: 49.4, CI: 2.1, N: 3}))
	assert.Equal(t, "–", FormatStat(Stat{Mean: math.NaN(), CI: math.NaN()}))
	assert.Equal(t, "×0.57", FormatRatio(0.566))
	assert.Equal(t, "×0.095", FormatRatio(0.0952))
	assert.Equal(t, "×1.50", FormatRatio(1.5))
	assert.Equal(t, "×254", FormatRatio(254.2))
}

func TestLookupPaper(t *testing.T) {
	p := map[string]float64{"sub_tput_wireline": 46731, "sub_tput_wireline_corrected": 467.31, "sub_tput_wireless": 14.27}
	v, ok := LookupPaper(p, SubTput, Wireline)
	require.True(t, ok)
	assert.True(t, v.HasErrata)
	assert.Equal(t, 46731.0, v.Printed)
	assert.Equal(t, 467.31, v.Value())
	v, ok = LookupPaper(p, SubTput, Wireless)
	require.True(t, ok)
	assert.False(t, v.HasErrata)
	assert.Equal(t, 14.27, v.Value())
	_, ok = LookupPaper(p, SubTput, "wifi-g")
	assert.False(t, ok, "other profiles have no published values")
	_, ok = LookupPaper(p, PubTput, Wireline)
	assert.False(t, ok)
}

func TestWriteMarkdown(t *testing.T) {
	d := tableDataset(t)
	var buf bytes.Buffer
	require.NoError(t, WriteMarkdown(&buf, d, ClaimsCheck{}, []string{"testdata/table.jsonl"}))
	md := buf.String()
	for _, want := range []string{
		"## Claims check",
		"## Suite tbl",
		"| 01 | 1/1/1 durable/persistent/auto bytes 100B | nats | wireline | 2 | 1050 ± 635.3 | 49.4 | 1040 ± 635.3 | 49.4 | 2.60 ± 1.27 | 3.4 |",
		"| 01 | 1/1/1 durable/persistent/auto bytes 100B | nats | wifi-paper | 1 (+1 failed) | 100.0 (n=1, no CI) | 27.9 | 99.0 (n=1, no CI) | 27.9 |",
		"467.31 (printed 46731)",
		"### wifi-paper / wireline ratios",
		"| 01 | nats | ×0.095 | ×0.56 | ×0.095 | ×0.56 | ×57.7 | ×42.1 |",
		"| 17 | nats | – | ×0.031 | – | ×0.031 | – | ×254 |", // corrected 467.31, not 46731,
		"### Notes and errata",
		"erratum: printed DURABLE",
		"### Flags",
		"| cpu-saturated | 1 | 03/nats/wireline | cpu-saturated: client 120%",
		"### Failed runs",
		"subscriber 0: connect: timeout",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	assert.NotContains(t, md, "NaN")
}

func TestMarkdownRowEscapes(t *testing.T) {
	var buf bytes.Buffer
	m := &mdWriter{w: bufio.NewWriter(&buf)}
	m.row("a|b", "c\nd")
	require.NoError(t, m.w.Flush())
	assert.Equal(t, "| a\\|b | c d |\n", buf.String())
}

func TestWriteCSV(t *testing.T) {
	d := tableDataset(t)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, d))
	rows, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+4) // header + 01 wireline, 01 wifi-paper, 03, 17
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	wi := rows[2]
	assert.Equal(t, "wifi-paper", wi[col["network"]])
	assert.Equal(t, "99", wi[col["sub_tput"]])
	assert.Equal(t, "", wi[col["sub_tput_ci95"]], "no CI for one repetition")
	assert.Equal(t, "1", wi[col["failed"]])
	assert.Equal(t, "27.9", wi[col["paper_sub_tput"]])
	assert.Equal(t, "0.0951923", wi[col["sub_ratio_vs_wireline"]])
	assert.Equal(t, "drain-incomplete:1", wi[col["flags"]])
	obj := rows[4]
	assert.Equal(t, "17", obj[col["case"]])
	assert.Equal(t, "467.31", obj[col["paper_sub_tput"]])
	assert.Equal(t, "sub_tput printed 46731", obj[col["paper_errata"]])
	assert.NotContains(t, buf.String(), "NaN")
}
