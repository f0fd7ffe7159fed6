package lab

import (
	"testing"

	"pslab/internal/broker"
	_ "pslab/internal/brokers/all" // the lab's tests run every broker, as cmd/pslab does
	"pslab/netem"
)

func TestMain(m *testing.M) {
	netem.RunRelayIfRequested() // the relay backend is this test binary, started again
	broker.RunTests(m)
}
