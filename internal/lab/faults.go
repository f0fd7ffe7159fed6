package lab

import (
	"context"
	"fmt"

	"pslab/internal/broker"
	"pslab/internal/metrics"
	"pslab/internal/scenario"
)

// restartable is what a broker needs for broker-restart faults
// (broker.Restartable).
type restartable interface {
	Kill() error
	Restart(ctx context.Context) error
}

// injector applies a case's link and broker faults: link faults through
// the lab's router (netem.Lab.SetFaultLoss), broker restarts through the
// broker, following the restarted broker's new PID in the resource
// sampler.
type injector struct {
	nw      *network
	b       broker.Broker
	sampler *metrics.ProcSampler
}

// Can implements load.Injector.
func (in injector) Can(k scenario.FaultKind) error {
	switch {
	case k.IsLink() && in.nw.lab == nil:
		return fmt.Errorf("refused: %s needs the emulated link (root and network namespaces); network %s runs on the host network here", k, in.nw.profile.Name)
	case k.IsLink() && in.nw.sub != nil:
		return fmt.Errorf("refused: %s on network %s, which has a link per role: the fault would have to say which role's link it hits, and faults cannot say that yet", k, in.nw.name())
	case k == scenario.BrokerRestart:
		if _, ok := in.b.(restartable); !ok {
			return fmt.Errorf("refused: pslab cannot kill and restart broker %s (one reached by --url, or the in-memory fake)", in.b.Name())
		}
	}
	return nil
}

// LinkLoss implements load.Injector.
func (in injector) LinkLoss(totalPct float64) (string, error) {
	extra, err := in.nw.lab.SetFaultLoss(totalPct)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("link loss %g %% (nftables drop %g %% on top of the profile's %g %%)", totalPct, extra, in.nw.profile.LossPct), nil
}

// LinkRestore implements load.Injector.
func (in injector) LinkRestore() (string, error) {
	fd, err := in.nw.lab.ClearFault()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("fault dropped %d packets to the broker, %d to the clients", fd.ToBroker, fd.ToClient), nil
}

// BrokerKill implements load.Injector.
func (in injector) BrokerKill() error { return in.b.(restartable).Kill() }

// BrokerRestart implements load.Injector.
func (in injector) BrokerRestart(ctx context.Context) error {
	if err := in.b.(restartable).Restart(ctx); err != nil {
		return err
	}
	if pid := in.b.PID(); pid > 0 && in.sampler != nil {
		in.sampler.Repoint("broker", pid)
	}
	return nil
}
