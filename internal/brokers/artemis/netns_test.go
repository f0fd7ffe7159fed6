package artemis_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"pslab/internal/brokers/artemis"
	"pslab/internal/driver"
	"pslab/internal/testbroker"
)

// nsHost runs the broker in a fresh network namespace (only its loopback,
// created by the test) the way the lab does: cmd.Start from a thread that
// entered the namespace.
type nsHost struct{ ns netns.NsHandle }

func (h nsHost) ListenIP() string { return "127.0.0.1" }

func (h nsHost) in(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	if err := netns.Set(h.ns); err != nil {
		return err
	}
	defer netns.Set(orig)
	return fn()
}

func (h nsHost) Start(cmd *exec.Cmd) error { return h.in(cmd.Start) }

func (h nsHost) Dialer() driver.Dialer { return h }

func (h nsHost) DialContext(ctx context.Context, network, addr string) (c net.Conn, err error) {
	err = h.in(func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

func newTestNS(t *testing.T) netns.NsHandle {
	t.Helper()
	testbroker.SkipShort(t, "root, a network namespace")
	testbroker.RequireRoot(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New() // enters it
	if err != nil {
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	if err := netns.Set(orig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	lo, err := nh.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := nh.LinkSetUp(lo); err != nil {
		t.Fatal(err)
	}
	return ns
}

// The broker runs inside the namespace: reachable through the host's
// dialer there, not from the test's own network.
func TestArtemisInNamespace(t *testing.T) {
	a := testbroker.Artemis(t, artemis.ArtemisConfig{Instance: "test-broker"})
	h := nsHost{ns: newTestNS(t)}
	ctx := context.Background()
	ep, err := a.Start(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	if ep.Dialer == nil {
		t.Fatal("endpoint has no dialer for the namespace")
	}
	if _, err := artemis.CheckSTOMP(ctx, ep); err != nil {
		t.Fatalf("login through the namespace dialer: %v", err)
	}
	d := net.Dialer{Timeout: time.Second}
	if c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", a.Config().Port)); err == nil {
		c.Close()
		t.Fatal("broker reachable from outside its namespace")
	}
	pid := a.PID()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if left := a.Processes(); len(left) > 0 {
		t.Fatalf("java processes left after Stop: %v (broker was %d)", left, pid)
	}
}
