package netem

import (
	"fmt"
	"sync"
)

var kernelBackend struct {
	once sync.Once
	b    Backend
	err  error
}

// CheckProfile reports whether this machine's link emulation can put
// profile p on the link, deciding as Apply does on a lab with the
// automatic backend (the profile's own backend if it names one; else the
// kernel's for rate and independent loss, netem where sch_netem exists,
// and the relay for the rest): an error wrapping ErrUnsupported names what
// p needs and the backend lacks, ErrRelayUnavailable a relay profile in a
// program that cannot be the relay. It needs what KernelBackend needs
// (root), probes the kernel once per process, and changes nothing. An
// unshaped profile needs nothing.
func CheckProfile(p Profile) error {
	if !p.Shaped() {
		return p.Validate()
	}
	b, err := backendFor("", p, func() (bool, error) {
		kernelBackend.once.Do(func() { kernelBackend.b, kernelBackend.err = KernelBackend() })
		return kernelBackend.b == BackendNetem, kernelBackend.err
	})
	if err != nil {
		return err
	}
	if b == BackendRelay && !relayCapable {
		return fmt.Errorf("%w: profile %q needs the relay backend, and this program does not call netem.RunRelayIfRequested at start", ErrRelayUnavailable, p.Name)
	}
	_, err = buildConfig(p, b, names{})
	return err
}
