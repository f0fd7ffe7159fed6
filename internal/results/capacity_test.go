package results

import (
	"strings"
	"testing"

	"pslab/internal/load"
	"pslab/internal/scenario"
)

func TestSaturationRule(t *testing.T) {
	for _, c := range []struct {
		client, broker float64
		sat, bound     bool
		why            string
	}{
		{90, 100, true, false, "broker 1.00 cores"},
		{40, 100, false, false, "machine not busy"},
		{110, 75, false, false, "broker used 0.75 cores < 0.80"},
		{125, 70, false, true, "client-bound"},
	} {
		s := SaturationOf(&Resources{ClientCPUPct: c.client, BrokerCPUPct: c.broker, Cores: 2})
		if s.Saturated != c.sat || s.ClientBound != c.bound || !strings.Contains(s.Why, c.why) {
			t.Errorf("client %g broker %g: %+v", c.client, c.broker, s)
		}
	}
	if s := SaturationOf(nil); s.Saturated || s.Why == "" {
		t.Errorf("no samples: %+v", s)
	}
}

func TestThroughputOf(t *testing.T) {
	r := &Record{Factors: scenario.Factors{Size: 1000},
		Result:    &load.Result{PubTput: 1000, SubTput: 4000},
		Resources: &Resources{ClientCPUPct: 90, BrokerCPUPct: 100, Cores: 2}}
	tp := ThroughputOf(r)
	if tp.OverallPerS != 5000 || tp.Replication != 4 || tp.ReceivedMbitS != 8 || tp.OverallMbitS != 40 || !tp.Saturation.Saturated {
		t.Errorf("%+v", tp)
	}
	if ThroughputOf(&Record{}) != nil {
		t.Error("throughput without a result")
	}
}
