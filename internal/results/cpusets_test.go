package results

import (
	"strings"
	"testing"
)

func TestSaturationOnOwnSets(t *testing.T) {
	for _, c := range []struct {
		client, broker float64
		brokerCPUs     string
		sat, bound     bool
		why            string
	}{
		{40, 97, "1", true, false, "broker-bound"},
		{40, 50, "1", false, false, "broker used 50% of its CPUs 1"},
		{75, 99, "1", false, true, "client-bound"},
		{30, 0, "", false, false, "not known"},
		{80, 0, "", false, true, "client-bound"},
	} {
		rs := &Resources{ClientCPUs: "0", BrokerCPUs: c.brokerCPUs, ClientSetPct: c.client, BrokerSetPct: c.broker,
			ClientCPUPct: c.client, BrokerCPUPct: c.broker, Cores: 2}
		s := SaturationOf(rs)
		if s.Saturated != c.sat || s.ClientBound != c.bound || !strings.Contains(s.Why, c.why) {
			t.Errorf("client %g broker %g on %q: %+v", c.client, c.broker, c.brokerCPUs, s)
		}
	}
	// Off: the same shares judged against the whole machine.
	if s := SaturationOf(&Resources{ClientCPUPct: 85, BrokerCPUPct: 99, Cores: 2}); s.ClientBound || !s.Saturated {
		t.Errorf("off: %+v", s)
	}
}
