// Package brokers is the registry of the brokers pslab can run. Each broker
// lives in its own package (brokers/nats, brokers/artemis, brokers/fake):
// its process, its protocol driver and its descriptor, which it registers
// from its init function. brokers/all imports them all; the program
// (cmd/pslab) chooses its brokers by importing it, the libraries loop over
// the registry they are given and never switch on a broker's name: a new
// broker is one package and one line in brokers/all.
package brokers

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"pslab/internal/broker"
	"pslab/internal/driver"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Descriptor is everything pslab knows about one broker.
type Descriptor struct {
	// Name is the broker's name in scenario files, flags and records.
	Name string
	// Summary says in a few words what the broker is, for help texts.
	Summary string
	// Version is the version of the broker pslab runs, when it is known
	// before it runs (embedded, or the one pslab installs); "" otherwise.
	Version string
	// Simulated marks a broker that is not a real broker (the in-memory
	// fake): its records are flagged and it is never a scenario default.
	Simulated bool

	// NewBroker makes the broker for a run in the lab called labName
	// (installing it first when needed); the lab starts and stops it.
	NewBroker func(ctx context.Context, labName string, log io.Writer) (broker.Broker, error)
	// NewDriver opens the driver on a started broker's endpoint.
	NewDriver func(ctx context.Context, ep driver.Endpoint) (driver.Driver, error)
	// Supports tells, before any broker runs, whether the driver can
	// express f (nil) or why not (wrapping driver.ErrUnsupported).
	Supports func(f scenario.Factors) error
	// Capabilities is the broker's capability table.
	Capabilities Capabilities

	// Schemes are the URL schemes of an external broker of this kind
	// (--url NAME=URL), e.g. "nats".
	Schemes []string
	// Probe tells over a fresh connection c to host (host:port) whether the
	// broker lets a client in without credentials, and how it knows.
	Probe broker.AccessProbe

	// Install installs the broker into pslab's cache (`pslab broker
	// install`), writing progress to log and the outcome to out.
	Install func(ctx context.Context, out, log io.Writer) error
	// Distribution returns the path of the broker's distribution archive,
	// fetching it first when it is missing (`pslab broker install
	// --print-path`); nil: the broker has none (it is built into pslab).
	Distribution func(ctx context.Context, log io.Writer) (string, error)
	// Start starts a broker in the background on loopback for manual use
	// (`pslab broker start`) and prints its URL and credentials to out.
	Start func(ctx context.Context, out, log io.Writer) error
	// Stop stops what Start left running (`pslab broker stop`).
	Stop func(ctx context.Context, out io.Writer) error
	// Doctor checks what the broker needs on this machine (`pslab doctor`).
	Doctor func(ctx context.Context) []Check
	// Login logs in to an external broker of this kind with its URL's
	// credentials (the check of --url before a run).
	Login broker.Login

	// MaxConns is how many client connections the broker pslab starts
	// accepts (0: no limit pslab knows of): a case with more is refused
	// before anything runs. An external broker (--url) is not checked.
	MaxConns int
	// Container says how the lab reaches the broker's container
	// (--container, docker-compose.yml); nil: it has none.
	Container *Container
	// Leftovers removes what runs of this broker left in pslab's cache
	// when they were killed (a run calls it before it starts, `pslab
	// clean` with Unused), one line per item removed; nil: nothing.
	Leftovers func(o LeftoverOptions) (removed []string, err error)
	// Caveats are notes a report prints on what the broker's records mean
	// (e.g. a factor measured by another mechanism than the paper's).
	Caveats []record.Caveat
	// WireBytes is what one message of a case run under prefix puts on
	// the link (TCP payload of the protocol's frames): to the broker (the
	// publish) and to one subscriber (the delivery); nil when pslab cannot
	// say. The link bound of a record is computed from it.
	WireBytes func(prefix string, f scenario.Factors) (toBroker, toClient int)
	// OwnProcess recognises a process of this broker that pslab started
	// with its cache in cacheDir, by the process's command line and
	// environment (NUL-separated, as /proc gives them), for the clean-up
	// of dead runs (internal/cleanup); nil: pslab starts no process of it.
	OwnProcess func(cacheDir string, cmdline, environ []byte) (OwnProcess, bool)
}

// OwnProcess is a broker process pslab started, as OwnProcess tells it.
type OwnProcess struct {
	What string // e.g. "Artemis (instance DIR)"
	// Lab is the lab whose instance it runs ("" when it does not say).
	Lab string
	// KeepOnHost: on the host network it may have been left running on
	// purpose (`pslab broker start`), so a clean-up never stops it there.
	KeepOnHost bool
}

// Container is how pslab reaches a broker's container through the lab's
// router (--container BROKER[=CONTAINER]).
type Container struct {
	// Name is the container's default name (docker-compose.yml's
	// container_name).
	Name string
	// Scheme and Port are the URL scheme and the client port inside the
	// container; Query is the URL's query (e.g. a monitoring port).
	Scheme string
	Port   int
	Query  string
	// UserVar and PassVar name the environment variables (as .env names
	// them) that hold the credentials.
	UserVar, PassVar string
	// OwnsNamespace marks the container whose network namespace the other
	// brokers' containers join (compose network_mode: "service:NAME"):
	// its process lives as long as the namespace, so the lab records the
	// namespace by it.
	OwnsNamespace bool
}

// LeftoverOptions say where a broker's Leftovers looks and what it may
// remove.
type LeftoverOptions struct {
	CacheDir string // pslab's cache (broker.CacheDir())
	// Unused also removes what no run uses now but a later run of the same
	// lab name would reuse (per-lab instances); a run leaves those.
	Unused bool
	// LabHeld tells whether a live run holds the lab called name.
	LabHeld func(name string) bool
}

// Capabilities is what a broker can express, as data instead of switches
// on its name.
type Capabilities struct {
	// FilterRefusals holds, for each filter kind the broker cannot express,
	// the reason (driver.FilterRefusals.Check words the refusal).
	FilterRefusals driver.FilterRefusals
	// FrameOverhead is how many bytes the protocol's frame of one message
	// adds to its body on the wire (pslab capacity's computed link bound
	// counts it per publish and per delivery); nil: the approximation of
	// NATS's and STOMP's frames (capacity.FrameOverhead, 100 bytes).
	FrameOverhead func(scenario.Factors) int
}

// Check is one line of `pslab doctor`.
type Check struct {
	Status string // ok, missing, limited, info
	What   string
	Detail string
}

// Registry holds descriptors by name. The zero value is empty and ready.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Descriptor
}

// Default is the registry the broker packages register into.
var Default = &Registry{}

// Register adds d to the default registry; it panics on a duplicate or
// incomplete descriptor (a programming error, found at start-up).
func Register(d Descriptor) { Default.Register(d) }

// Lookup finds a broker of the default registry by name.
func Lookup(name string) (Descriptor, bool) { return Default.Lookup(name) }

// Names lists the brokers of the default registry, sorted.
func Names() []string { return Default.Names() }

// Register adds d; it panics on a duplicate or incomplete descriptor.
func (r *Registry) Register(d Descriptor) {
	if d.Name == "" || d.NewBroker == nil || d.NewDriver == nil || d.Supports == nil {
		panic(fmt.Sprintf("brokers: descriptor %q lacks a name, NewBroker, NewDriver or Supports", d.Name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[d.Name]; dup {
		panic("brokers: " + d.Name + " registered twice")
	}
	if r.m == nil {
		r.m = map[string]Descriptor{}
	}
	r.m[d.Name] = d
}

// Lookup finds a broker by name.
func (r *Registry) Lookup(name string) (Descriptor, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.m[name]
	return d, ok
}

// Names lists the registered brokers, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get finds a broker by name or says which ones exist.
func (r *Registry) Get(name string) (Descriptor, error) {
	if d, ok := r.Lookup(name); ok {
		return d, nil
	}
	return Descriptor{}, fmt.Errorf("unknown broker %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// OpenAccess says whether the external broker ext lets a client in
// without credentials, with the probe of the broker whose descriptor
// claims its URL's scheme (nats:// is probed as NATS, stomp:// as STOMP).
func (r *Registry) OpenAccess(ctx context.Context, ext *broker.External) (bool, string, error) {
	d, err := r.byScheme(ext, "probe", func(d Descriptor) bool { return d.Probe != nil })
	if err != nil {
		return false, "", err
	}
	return ext.OpenAccess(ctx, d.Probe)
}

// CheckLogin logs in to the external broker ext with its URL's
// credentials, with the login of the broker whose descriptor claims its
// URL's scheme.
func (r *Registry) CheckLogin(ctx context.Context, ext *broker.External) error {
	d, err := r.byScheme(ext, "log in to", func(d Descriptor) bool { return d.Login != nil })
	if err != nil {
		return err
	}
	return ext.CheckLogin(ctx, d.Login)
}

// byScheme is the broker whose descriptor claims ext's URL scheme and has
// what has asks for, or an error that names the schemes there are.
func (r *Registry) byScheme(ext *broker.External, what string, has func(Descriptor) bool) (Descriptor, error) {
	scheme, _, _ := strings.Cut(ext.URL(), "://")
	var all []string
	for _, n := range r.Names() {
		d, _ := r.Lookup(n)
		if !has(d) {
			continue
		}
		if slices.Contains(d.Schemes, scheme) {
			return d, nil
		}
		all = append(all, d.Schemes...)
	}
	return Descriptor{}, fmt.Errorf("%s: cannot tell how to %s %s (want %s)", ext.Name(), what, ext.URL(), schemeList(all))
}

func schemeList(s []string) string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x + "://"
	}
	return strings.Join(out, " or ")
}
