package record

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAnalysisBuildsWithoutBrokerClientsOrNetlink: the record schema and
// everything that reads records (results, audit, report, model, plot)
// depend on no broker client, netlink or nftables, nor on the load engine
// or the lab: reading a bundle needs none of them.
func TestAnalysisBuildsWithoutBrokerClientsOrNetlink(t *testing.T) {
	pkgs := []string{"pslab/internal/record", "pslab/internal/results", "pslab/internal/audit",
		"pslab/internal/report", "pslab/internal/model", "pslab/internal/plot"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < len(pkgs) {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, d := range deps {
		if forbidden(d) {
			t.Errorf("the analysis side depends on %s", d)
		}
	}
}

// forbidden: a broker client, netlink or nftables, or a pslab package that
// runs things (netem but its plain types, load, drivers, brokers, the lab).
func forbidden(pkg string) bool {
	for _, p := range []string{"github.com/nats-io/", "github.com/go-stomp/", "github.com/google/nftables",
		"github.com/vishvananda/netlink", "github.com/mdlayher/netlink"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	if pkg == "pslab/netem/linkinfo" {
		return false
	}
	for _, p := range []string{"pslab/netem", "pslab/internal/load", "pslab/internal/driver", "pslab/internal/broker",
		"pslab/internal/brokers", "pslab/internal/lab"} {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

func TestForbidden(t *testing.T) {
	for pkg, want := range map[string]bool{
		"github.com/nats-io/nats.go": true, "github.com/vishvananda/netlink/nl": true, "pslab/netem": true,
		"pslab/netem/linkinfo": false, "pslab/internal/brokers/nats": true, "pslab/internal/metrics": false,
		"pslab/internal/loadx": false,
	} {
		if forbidden(pkg) != want {
			t.Errorf("forbidden(%q) = %v", pkg, !want)
		}
	}
}
