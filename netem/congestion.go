package netem

import (
	"fmt"
	"os"
	"strings"
)

// congestionPath is the TCP congestion control a namespace's new sockets
// use (per network namespace; a new one inherits the host's).
const congestionPath = "/proc/sys/net/ipv4/tcp_congestion_control"

// availablePath lists the congestion controls the kernel has (built in
// or loaded; the same list in every namespace).
const availablePath = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// CheckCongestionControl refuses a TCP congestion control this kernel does
// not have, naming the ones it has.
func CheckCongestionControl(name string) error {
	b, err := os.ReadFile(availablePath)
	if err != nil {
		return fmt.Errorf("netem: TCP congestion control %q: cannot read the kernel's list: %w", name, err)
	}
	have := strings.Fields(string(b))
	for _, h := range have {
		if h == name {
			return nil
		}
	}
	return fmt.Errorf("netem: TCP congestion control %q: this kernel has %s", name, strings.Join(have, ", "))
}

// setCongestionControl sets the TCP congestion control in the lab's client
// namespaces (each link's) and its broker namespace.
func (l *Lab) setCongestionControl(name string) error {
	nss := []string{l.n.NsCli, l.n.NsBrk}
	if l.second != nil {
		nss = append(nss, l.second.n.NsCli)
	}
	for _, ns := range nss {
		if err := writeSysctl(ns, congestionPath, name); err != nil {
			return fmt.Errorf("tcp_congestion_control %s in %s: %w", name, ns, err)
		}
	}
	return nil
}

// HostCongestionControl is the TCP congestion control of this process's
// network namespace (the loopback path's).
func HostCongestionControl() string {
	b, err := os.ReadFile(congestionPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CongestionControl is the TCP congestion control of the lab's client and
// broker namespaces, where the two ends of every connection are made:
// "bbr" when both use it, "clients=X;broker=Y" when they differ. It is a
// factor of every measurement over a lossy or slow link (BBR and CUBIC
// answer loss differently), so records carry it.
func (l *Lab) CongestionControl() (string, error) {
	cli, err := readSysctl(l.n.NsCli, congestionPath)
	if err != nil {
		return "", fmt.Errorf("netem: tcp_congestion_control in %s: %w", l.n.NsCli, err)
	}
	brkNS, err := l.brokerNS()
	if err != nil {
		return "", err
	}
	brk, err := readSysctl(brkNS, congestionPath)
	if err != nil {
		return "", fmt.Errorf("netem: tcp_congestion_control in %s: %w", brkNS, err)
	}
	if cli == brk {
		return cli, nil
	}
	return fmt.Sprintf("clients=%s;broker=%s", cli, brk), nil
}
