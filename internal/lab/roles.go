package lab

import (
	"errors"
	"fmt"
	"strings"

	"pslab/netem"
)

// A network is one profile for every client (a built-in name or a profile
// YAML file), or a link per role: "pub=PROFILE+sub=PROFILE" puts the
// publishers on one link and the subscribers on another, both to the same
// broker, all clients still in this one process on one monotonic clock
// (the lab's second link gives the subscribers a client namespace of their
// own; a socket keeps the namespace it was made in).

// Roles of a network with a link per role, as its name spells them.
const (
	rolePub = "pub"
	roleSub = "sub"
)

// networkSpec is a network as a run names it.
type networkSpec struct {
	name    string        // as given
	pub     netem.Profile // the publishers' link (the only one without roles)
	sub     netem.Profile // the subscribers' link (= pub without roles)
	perRole bool
}

// profiles are the network's links' profiles: one, or the publishers' and
// the subscribers'.
func (s networkSpec) profiles() []netem.Profile {
	if !s.perRole {
		return []netem.Profile{s.pub}
	}
	return []netem.Profile{s.pub, s.sub}
}

// errRoleSpec is wrapped by every refusal of a spec with roles.
var errRoleSpec = errors.New("a network with a link per role is pub=PROFILE+sub=PROFILE")

// isRoleSpec says whether name is meant as a link per role.
func isRoleSpec(name string) bool {
	return strings.HasPrefix(name, rolePub+"=") || strings.HasPrefix(name, roleSub+"=")
}

// loadNetwork loads a network's profiles; every problem of a spec with
// roles is reported at once.
func loadNetwork(name string) (networkSpec, error) {
	if !isRoleSpec(name) {
		p, err := netem.LoadProfile(name)
		return networkSpec{name: name, pub: p, sub: p}, err
	}
	s := networkSpec{name: name, perRole: true}
	var errs []error
	seen := map[string]bool{}
	parts := strings.Split(name, "+")
	if len(parts) > 2 {
		errs = append(errs, fmt.Errorf("%w (the profiles' names or paths without '+'): %q has %d parts", errRoleSpec, name, len(parts)))
	}
	for _, part := range parts {
		role, prof, ok := strings.Cut(part, "=")
		switch {
		case !ok || (role != rolePub && role != roleSub):
			errs = append(errs, fmt.Errorf("%w: %q is not %s=PROFILE or %s=PROFILE", errRoleSpec, part, rolePub, roleSub))
			continue
		case seen[role]:
			errs = append(errs, fmt.Errorf("%w: role %s given twice", errRoleSpec, role))
			continue
		}
		seen[role] = true
		p, err := netem.LoadProfile(prof)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", role, err))
			continue
		}
		if role == rolePub {
			s.pub = p
		} else {
			s.sub = p
		}
	}
	for _, r := range []string{rolePub, roleSub} {
		if !seen[r] && len(parts) <= 2 {
			errs = append(errs, fmt.Errorf("%w: no %s= in %q", errRoleSpec, r, name))
		}
	}
	return s, errors.Join(errs...)
}

// CheckNetwork reports a network name that is neither a profile nor a
// valid link per role.
func CheckNetwork(name string) error {
	_, err := loadNetwork(name)
	return err
}

// shaped: some link of the network is shaped.
func (s networkSpec) shaped() bool { return s.pub.Shaped() || s.sub.Shaped() }

// recordName is the network's name in records: the profile's own name,
// or the spec with roles as given.
func (s networkSpec) recordName() string {
	if s.perRole {
		return s.name
	}
	return s.pub.Name
}

// checkRoles refuses a link per role where it cannot be built: it needs
// the lab's own namespaces with the broker inside (root; no --url, no
// --broker-pid, no broker on another host).
func (s networkSpec) checkRoles(o Options) error {
	if !s.perRole {
		return nil
	}
	if len(o.URLs) > 0 || o.BrokerPID != 0 {
		return fmt.Errorf("network %s: a link per role needs the broker pslab starts in the lab's own broker namespace, not one reached by --url or --broker-pid", s.name)
	}
	if o.Policy != nil {
		return fmt.Errorf("network %s: a link per role is not supported in capacity mode yet: its bounds and verdicts take one link's profile and verification, and this network has two", s.name)
	}
	return nil
}

// roleLink is the subscribers' link of a network with a link per role
// (the lab's second link); the network's own fields are the publishers'.
type roleLink struct {
	profile netem.Profile
	lab     *netem.Lab
	backend netem.Backend
	verify  *netem.Verification
}
