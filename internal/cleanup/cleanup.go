// Package cleanup finds and removes what pslab runs leave when they are
// killed or when their lab name is not used again: broker processes of
// dead runs (stopped gracefully, then killed; brokers.go says how they are
// told from anything else, each broker's OwnProcess recognises its own),
// what each broker's Leftovers finds on disk (its descriptor in
// internal/brokers says what: stores of dead runs, per-lab instances no
// broker runs), and lab lock files and namespaces no live lab holds. It
// never touches what a live pslab uses: a broker whose pslab lives or
// whose lab is held, a store or instance a live run uses, a held lock.
package cleanup

import (
	"errors"
	"os"

	"pslab/internal/brokers"
	"pslab/internal/labtls"
	"pslab/netem"
)

// Options say where to look and what to remove.
type Options struct {
	CacheDir string // pslab's cache (broker.CacheDir())
	// Instances also removes what no run uses now but a later run of the
	// same lab name would reuse (per-lab broker instances: pslab clean); a
	// run leaves those.
	Instances bool
	// Registry holds the brokers whose processes of dead runs are stopped
	// and whose leftovers are looked for (nil: brokers.Default, every
	// broker the program registered).
	Registry *brokers.Registry
}

// Leftovers removes what dead runs left and returns a line per removed
// item; errors of single items are joined, the rest goes on.
func Leftovers(o Options) (removed []string, err error) {
	var errs []error
	reg := o.Registry
	if reg == nil {
		reg = brokers.Default
	}
	r, e := stopOrphans(findOrphans(reg, o.CacheDir), stopGrace) // first: their stores, instances and namespaces go next
	removed, errs = append(removed, r...), append(errs, e)
	lo := brokers.LeftoverOptions{CacheDir: o.CacheDir, Unused: o.Instances, LabHeld: func(name string) bool {
		held, _ := netem.LabHeld(name)
		return held
	}}
	for _, n := range reg.Names() {
		if d, _ := reg.Lookup(n); d.Leftovers != nil {
			r, e := d.Leftovers(lo)
			removed, errs = append(removed, r...), append(errs, e)
		}
	}
	r, e = labtls.Leftovers(o.CacheDir) // TLS material of labs whose pslab has ended
	removed, errs = append(removed, r...), append(errs, e)
	if os.Geteuid() == 0 { // labs (and their lock files in /run) need root
		r, e := staleLocks()
		removed, errs = append(removed, r...), append(errs, e)
	}
	return removed, errors.Join(errs...)
}

// staleLocks removes the namespaces and lock files of labs no live run
// holds.
func staleLocks() ([]string, error) {
	var removed []string
	var errs []error
	for _, name := range netem.StaleLockNames() {
		r, err := netem.Cleanup(name)
		removed = append(removed, r...)
		if err != nil {
			if !errors.Is(err, netem.ErrInUse) { // taken meanwhile: not stale
				errs = append(errs, err)
			}
			continue
		}
		ok, err := netem.RemoveStaleLock(name)
		if err != nil && !errors.Is(err, netem.ErrInUse) {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, "lock file of lab "+name+" (no run holds it)")
		}
	}
	return removed, errors.Join(errs...)
}
