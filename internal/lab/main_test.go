package lab

import (
	"testing"

	"pslab/internal/broker"
	_ "pslab/internal/brokers/all" // the lab's tests run every broker, as cmd/pslab does
)

func TestMain(m *testing.M) { broker.RunTests(m) }
