package netem

import (
	"fmt"
	"os"
	"strings"
)

// congestionPath is the TCP congestion control a namespace's new sockets
// use (per network namespace; a new one inherits the host's).
const congestionPath = "/proc/sys/net/ipv4/tcp_congestion_control"

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
