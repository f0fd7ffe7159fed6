package netem

import "sync"

var kernelBackend struct {
	once sync.Once
	b    Backend
	err  error
}

// CheckProfile reports whether this machine's link emulation can put
// profile p on the link, deciding as Apply does on a lab with the
// automatic backend (the kernel's: netem where sch_netem exists, else
// tbf+nftables): an error wrapping ErrUnsupported names what p needs and
// the backend lacks. It needs what KernelBackend needs (root), probes the
// kernel once per process, and changes nothing. An unshaped profile needs
// nothing.
func CheckProfile(p Profile) error {
	if !p.Shaped() {
		return p.Validate()
	}
	kernelBackend.once.Do(func() { kernelBackend.b, kernelBackend.err = KernelBackend() })
	if kernelBackend.err != nil {
		return kernelBackend.err
	}
	_, err := buildConfig(p, kernelBackend.b, names{})
	return err
}
