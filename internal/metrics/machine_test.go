package metrics

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMachineStat(t *testing.T) {
	busy, err := parseMachineStat([]byte("cpu  10 2 30 1000 50 4 5 6 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(10+2+30), busy, "processes only: not idle, iowait, irq, softirq or steal")
	_, err = parseMachineStat([]byte("intr 1 2 3\n"))
	assert.Error(t, err)
}

// TestMachineSamplesSeeOtherProcesses: the machine's samples include the
// CPU of a process the run does not watch (a busy loop standing for
// another lab), which the per-process samples alone never showed.
func TestMachineSamplesSeeOtherProcesses(t *testing.T) {
	busy := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, busy.Start())
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	p := NewProcSampler(100 * time.Millisecond)
	p.Watch("machine", MachinePID)
	p.Watch("other", busy.Process.Pid)
	p.Start(context.Background())
	for deadline := time.Now().Add(60 * time.Second); p.rounds.Load() < 10; {
		require.True(t, time.Now().Before(deadline), "sampler made fewer than 10 rounds in 60 s")
		time.Sleep(20 * time.Millisecond)
	}
	got := p.Stop()
	require.NotEmpty(t, got["machine"])
	require.NotEmpty(t, got["other"])
	machine, other := MeanCPU(got["machine"]), MeanCPU(got["other"])
	assert.Greater(t, other, 0.0, "the busy loop ran")
	assert.GreaterOrEqual(t, machine, 0.8*other, "the machine's busy CPU includes every process")
	assert.Zero(t, PeakRSS(got["machine"]), "the machine has no RSS of its own")
}
