package lab

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestUnknownBrokerAndNetworkBothReportedWithLines: both bad lists of a
// file are reported, each at its line (before: only the broker, no line);
// names from flags blame the flag, not the file.
func TestUnknownBrokerAndNetworkBothReportedWithLines(t *testing.T) {
	s, err := scenario.Parse("f.yaml", []byte("suite: b\nbrokers: [rabbitmq]\nnetworks: [wifi-moon]\ncases:\n  - id: a\n"), scenario.Options{})
	require.NoError(t, err)
	_, err = MakePlan(s, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `f.yaml:2: brokers: unknown broker "rabbitmq"`)
	assert.Contains(t, err.Error(), `f.yaml:3: networks: unknown profile "wifi-moon"`)
	s.Brokers, s.Networks = []string{"nats"}, []string{"wireline"}
	_, err = MakePlan(s, Options{Brokers: []string{"rabbit"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--broker unknown broker "rabbit"`)
	assert.NotContains(t, err.Error(), "f.yaml")
}

// TestConnectionLimitsCheckedBeforeRunning: more clients than the embedded
// nats-server accepts, or than ulimit -n allows, are refused at the case's
// line before anything is built (before: broken pipes, or "too many open
// files", mid-case).
func TestConnectionLimitsCheckedBeforeRunning(t *testing.T) {
	s, err := scenario.Parse("c.yaml", []byte("suite: b\ncases:\n  - publishers: 1000000\n  - publishers: 400\n    subscribers: 400\n    topics: 400\n"), scenario.Options{})
	require.NoError(t, err)
	_, err = MakePlan(s, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.yaml:3: case 01 on nats: 1000001 connections")
	assert.NotContains(t, err.Error(), "case 02", "800 clients fit under ulimit -n of the test")

	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	low := lim
	low.Cur = 512
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	_, err = MakePlan(s, Options{})
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.yaml:4: case 02 on nats: 800 connections need about 864 open files, and ulimit -n is 512")
}

// TestHeldLabIsRefused: a lab name another run holds is refused before
// anything runs (before: exit 1 after the suite header).
func TestHeldLabIsRefused(t *testing.T) {
	testbroker.RequireRoot(t) // lab locks live in /run
	name := "heldtest"
	f, err := os.OpenFile("/run/pslab-"+name+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk))
	err = CheckLab(name)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--lab heldtest: the lab is held by a running pslab")
	assert.NoError(t, CheckLab("freetest"))
}
