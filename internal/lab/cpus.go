package lab

import (
	"fmt"
	"io"
	"os/exec"

	"pslab/internal/broker"
	"pslab/internal/cpuset"
	"pslab/internal/driver"
	"pslab/internal/results"
)

// isolation is a run's CPU plan in force: this process (the load clients)
// confined to the clients' set, brokers started on the broker's set. A nil
// isolation is off.
type isolation struct {
	plan    cpuset.Plan
	restore func() error
}

// isolate puts the plan in force for a run: this process onto the
// clients' set and an external broker's process (brokerPID) onto the
// broker's. The caller ends it with end.
func isolate(plan cpuset.Plan, brokerPID int, log io.Writer) (*isolation, error) {
	if plan.Off() {
		fmt.Fprintf(log, "cpus: broker and clients share every CPU (%s)\n", plan.Why)
		return nil, nil
	}
	restore, err := cpuset.PinSelf(plan.Clients)
	if err != nil {
		return nil, fmt.Errorf("--cpus: confine the clients to CPUs %s: %w", plan.Clients, err)
	}
	iso := &isolation{plan: plan, restore: restore}
	if brokerPID > 0 {
		if err := cpuset.SetThreads(brokerPID, plan.Broker); err != nil {
			iso.end()
			return nil, fmt.Errorf("--cpus: confine the broker (--broker-pid %d) to CPUs %s: %w", brokerPID, plan.Broker, err)
		}
	}
	fmt.Fprintf(log, "cpus: clients on %s (GOMAXPROCS %d), broker on %s (%s)\n", plan.Clients, len(plan.Clients), plan.Broker, plan.Why)
	return iso, nil
}

// end gives this process back the CPUs it had.
func (iso *isolation) end() {
	if iso != nil {
		_ = iso.restore()
	}
}

// host is h starting its broker processes on the broker's set.
func (iso *isolation) host(h broker.Host) broker.Host {
	if iso == nil {
		return h
	}
	return pinnedHost{Host: h, set: iso.plan.Broker}
}

// annotate writes the sets into rs and each side's CPU use as a share of
// its own set; brokerKnown says whether the broker's process was sampled
// and confined (not an external broker pslab knows only by URL).
func (iso *isolation) annotate(rs *results.Resources, brokerKnown bool) {
	if iso == nil || rs == nil {
		return
	}
	rs.ClientCPUs = iso.plan.Clients.String()
	rs.ClientSetPct = rs.ClientCPUPct / float64(len(iso.plan.Clients))
	if brokerKnown {
		rs.BrokerCPUs = iso.plan.Broker.String()
		rs.BrokerSetPct = rs.BrokerCPUPct / float64(len(iso.plan.Broker))
	}
}

// pinnedHost is a broker.Host whose processes start on set (every thread
// they ever start included, see cpuset.PinCmd).
type pinnedHost struct {
	broker.Host
	set cpuset.Set
}

// Start implements broker.Host.
func (h pinnedHost) Start(cmd *exec.Cmd) error {
	if err := cpuset.PinCmd(cmd, h.set); err != nil {
		return err
	}
	return h.Host.Start(cmd)
}

// AdminDialer implements broker.AdminHost when the wrapped host does.
func (h pinnedHost) AdminDialer() driver.Dialer {
	if a, ok := h.Host.(broker.AdminHost); ok {
		return a.AdminDialer()
	}
	return nil
}

// ExternalAdminDialer implements broker.ExternalAdminHost when the wrapped
// host does (nil: administration dials as the clients do). Without it the
// wrapper hid a running broker's administration dialer whenever the CPUs
// were split (the default): another host's administration crossed the
// emulated link.
func (h pinnedHost) ExternalAdminDialer() driver.Dialer {
	if a, ok := h.Host.(broker.ExternalAdminHost); ok {
		return a.ExternalAdminDialer()
	}
	return nil
}
