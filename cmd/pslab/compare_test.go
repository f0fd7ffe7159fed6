package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join("..", "..", "internal", "report", "testdata", "claims.jsonl")
	out := filepath.Join(dir, "cmp.md")
	for name, args := range map[string][]string{
		"missing set":  {"compare", fx, filepath.Join(dir, "nope"), "--out", out},
		"one set":      {"compare", fx, "--out", out},
		"bad margin":   {"compare", fx, fx, "--margin", "150%", "--out", out},
		"bad format":   {"compare", fx, fx, "--format", "xls", "--out", out},
		"nothing same": {"compare", fx, filepath.Join("..", "..", "internal", "report", "testdata", "table.jsonl"), "--out", out},
	} {
		assert.Equal(t, exitBadInput, execute(args), name)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%s: nothing written", name)
	}
	// Flags keep their values between execute calls in one process: set them all.
	require.Equal(t, exitOK, execute([]string{"compare", fx, fx, "--out", out, "--margin", "5%", "--format", "md"}))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), "# pslab compare")
	assert.Contains(t, string(b), "±5 %")
}

func TestPairRecordsMeetsAsBrokerA(t *testing.T) {
	recs := []results.Record{{Broker: "nats"}, {Broker: "nats-mqtt"}, {Broker: "artemis"}, {Broker: "mosquitto"}}
	pairs := map[string]string{"nats-mqtt": "nats"}
	a := pairRecords(recs, pairs, false)
	b := pairRecords(recs, pairs, true)
	if len(a) != 1 || a[0].Broker != "nats" {
		t.Errorf("first set: %+v", a)
	}
	if len(b) != 1 || b[0].Broker != "nats" {
		t.Errorf("second set: nats-mqtt's records named nats: %+v", b)
	}
}
