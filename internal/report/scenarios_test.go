package report

import (
	"encoding/csv"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/scenario"
)

// The shipped scenario files define the paper's 50 cases exactly as
// Tables 1 and 2 (copied into testdata from the reference directory) do,
// with the errata of Table 2 applied to the factors only.
func TestScenarioFilesMatchPaperTables(t *testing.T) {
	t1 := readCSV(t, "testdata/gaddah-kunz-table1.csv")
	s1, err := scenario.Load("../../scenarios/gaddah-kunz-set1.yaml", scenario.Options{})
	require.NoError(t, err)
	require.Len(t, s1.Cases, 32)
	require.Len(t, t1, 32)
	for i, row := range t1 {
		c := s1.Cases[i]
		assert.Equal(t, row["test"], c.ID)
		assert.Equal(t, atoi(t, row["publishers"]), c.Publishers, c.ID)
		assert.Equal(t, atoi(t, row["subscribers"]), c.Subscribers, c.ID)
		assert.Equal(t, atoi(t, row["topics"]), c.Topics, c.ID)
		assert.Equal(t, atoi(t, row["body_bytes"]), c.Size, c.ID)
		assert.Equal(t, subscriptionOf(row["subscription"]), c.Subscription, c.ID)
		assert.Equal(t, deliveryOf(row["delivery"]), c.Delivery, c.ID)
		assert.Equal(t, scenario.AckAuto, c.Ack, c.ID)
		assert.Equal(t, scenario.BodyBytes, c.Body, c.ID)
		assert.False(t, c.Selector, c.ID)
		checkPaper(t, row, c)
	}

	t2 := readCSV(t, "testdata/gaddah-kunz-table2.csv")
	s2, err := scenario.Load("../../scenarios/gaddah-kunz-set2.yaml", scenario.Options{})
	require.NoError(t, err)
	require.Len(t, s2.Cases, 18)
	require.Len(t, t2, 18)
	for i, row := range t2 {
		c := s2.Cases[i]
		assert.Equal(t, row["test"], c.ID)
		assert.Equal(t, [3]int{1, 1, 1}, [3]int{c.Publishers, c.Subscribers, c.Topics}, c.ID)
		assert.Equal(t, 2048, c.Size, c.ID)
		sub := subscriptionOf(row["subscription"])
		if c.ID == "17" || c.ID == "18" {
			// Erratum: rows 17 and 18 carry swapped subscription labels.
			assert.NotEqual(t, sub, c.Subscription, c.ID)
			assert.Contains(t, c.Note, "erratum", c.ID)
		} else {
			assert.Equal(t, sub, c.Subscription, c.ID)
			assert.Empty(t, c.Note, c.ID)
		}
		assert.Equal(t, deliveryOf(row["delivery"]), c.Delivery, c.ID)
		assert.Equal(t, map[string]scenario.AckMode{"AUTO": scenario.AckAuto, "DUPS_OK": scenario.AckDupsOK}[row["ack_mode"]], c.Ack, c.ID)
		assert.Equal(t, row["selector"] == "YES", c.Selector, c.ID)
		assert.Equal(t, map[string]scenario.BodyType{"BytesMessage": scenario.BodyBytes, "ObjectMessage": scenario.BodyObject}[row["body_type"]], c.Body, c.ID)
		checkPaper(t, row, c)
	}
	assert.Equal(t, scenario.NonDurable, s2.Cases[16].Subscription, "case 17 is the ObjectMessage twin of case 6")
	assert.Equal(t, 467.31, s2.Cases[16].Paper["sub_tput_wireline_corrected"])
	assert.Contains(t, s2.Cases[16].Note, "467.31")

	for _, s := range []*scenario.Suite{s1, s2} {
		assert.Equal(t, []string{"nats", "artemis"}, s.Brokers)
		assert.Equal(t, []string{"wireline", "wifi-paper"}, s.Networks)
		assert.Equal(t, 3, s.Reps)
	}
}

// The quick profile keeps every case's connection model.
func TestScenarioQuickKeepsModels(t *testing.T) {
	for _, f := range []string{"../../scenarios/gaddah-kunz-set1.yaml", "../../scenarios/gaddah-kunz-set2.yaml"} {
		full, err := scenario.Load(f, scenario.Options{})
		require.NoError(t, err)
		quick, err := scenario.Load(f, scenario.Options{Quick: true})
		require.NoError(t, err)
		for i := range full.Cases {
			assert.Equal(t, full.Cases[i].Model, quick.Cases[i].Model, "%s case %s", f, full.Cases[i].ID)
			assert.LessOrEqual(t, quick.Cases[i].Publishers+quick.Cases[i].Subscribers, 110, "%s case %s", f, full.Cases[i].ID)
			assert.LessOrEqual(t, quick.Cases[i].Window, full.Cases[i].Window)
		}
	}
}

func checkPaper(t *testing.T, row map[string]string, c scenario.Case) {
	t.Helper()
	for _, k := range []string{"pub_tput_wireline", "pub_tput_wireless", "sub_tput_wireline", "sub_tput_wireless", "latency_ms_wireline", "latency_ms_wireless"} {
		want, err := strconv.ParseFloat(row[k], 64)
		require.NoError(t, err)
		assert.Equal(t, want, c.Paper[k], "case %s %s", c.ID, k)
	}
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = strings.TrimSpace(r[i])
		}
		out = append(out, m)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

func subscriptionOf(s string) scenario.Subscription {
	if s == "DURABLE" {
		return scenario.Durable
	}
	return scenario.NonDurable
}

func deliveryOf(s string) scenario.Delivery {
	if s == "PERSISTENT" {
		return scenario.Persistent
	}
	return scenario.NonPersistent
}
