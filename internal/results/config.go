package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// ConfigHash identifies a broker's effective configuration: the SHA-256
// of its settings (sorted key=value lines) and of its configuration files
// (sorted by name, each name and contents), as the broker's package
// produces them with what differs between instances of one configuration
// (paths, addresses, ports, passwords) left out. 16 hex digits.
func ConfigHash(settings map[string]string, files map[string][]byte) string {
	h := sha256.New()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "setting %q=%q\n", k, settings[k])
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "file %q %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Identity is what must be the same for records to be pooled: the pslab
// build that made them and the broker's effective configuration. Build is
// the record's versions.pslab (a commit, or "sha256:" and a hash of the
// executable for a build without version control stamping, "+dirty" when
// its tree differed: package buildid; plain "devel", from records made
// before that, cannot tell two builds apart); Config is
// empty for records made before configurations were hashed. TCP is the
// record's network.tcp_congestion (BBR and CUBIC answer loss differently:
// a run with --tcp-congestion cubic is another configuration); empty for
// records made before it was recorded.
type Identity struct {
	Build  string
	Config string
	TCP    string
}

// IdentityOf is the record's identity.
func (r *Record) IdentityOf() Identity {
	return Identity{Build: r.Versions.Pslab, Config: r.BrokerConfig, TCP: r.Network.TCPCongestion}
}

// String names the identity for labels: "build b1b923a0c2d4, config 3f2a…".
func (id Identity) String() string {
	b, c := id.Build, id.Config
	if b == "" {
		b = "unknown"
	}
	if c == "" {
		c = "not recorded"
	}
	s := "build " + b + ", broker config " + c
	if id.TCP != "" {
		s += ", TCP " + id.TCP
	}
	return s
}
