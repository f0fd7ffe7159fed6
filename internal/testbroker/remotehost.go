package testbroker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RemoteHost is a stand-in for another machine in tests: a named network
// namespace joined to the host's namespace by a veth pair with its own
// /30, so that a broker started inside it is "a broker on another host"
// that the host reaches by an ordinary route, and packets to it never
// leave this machine. Root only. Namespace Name, host end HostIf with
// HostIP, far end inside the namespace with IP.
type RemoteHost struct {
	Name   string
	HostIf string
	HostIP string // the host's end, e.g. 10.78.0.1
	IP     string // the remote host's address, e.g. 10.78.0.2
}

// NewRemoteHost makes the namespace name and the veth pair hostIf (on the
// host, hostIP/30) <-> hostIf+"r" (inside, ip/30, default route via
// hostIP). Leftovers of an earlier run with the same names are removed
// first.
func NewRemoteHost(name, hostIf, hostIP, ip string) (*RemoteHost, error) {
	h := &RemoteHost{Name: name, HostIf: hostIf, HostIP: hostIP, IP: ip}
	_ = h.Close()
	if err := h.build(); err != nil {
		return nil, errors.Join(err, h.Close())
	}
	return h, nil
}

func (h *RemoteHost) build() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	ns, err := netns.NewNamed(h.Name) // switches this thread into it
	if err != nil {
		return fmt.Errorf("create netns %s: %w", h.Name, err)
	}
	defer ns.Close()
	if err := netns.Set(orig); err != nil {
		panic(fmt.Sprintf("remotehost: cannot switch back to the host namespace: %v", err))
	}
	peer := h.HostIf + "r"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: h.HostIf}, PeerName: peer,
		PeerNamespace: netlink.NsFd(int(ns))}); err != nil {
		return fmt.Errorf("veth %s: %w", h.HostIf, err)
	}
	if err := configure(netlink.Handle{}, h.HostIf, h.HostIP, ""); err != nil {
		return err
	}
	in, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer in.Close()
	if lo, err := in.LinkByName("lo"); err == nil {
		_ = in.LinkSetUp(lo)
	}
	return configure(*in, peer, h.IP, h.HostIP)
}

func configure(hd netlink.Handle, dev, ip, gw string) error {
	link, err := hd.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("find %s: %w", dev, err)
	}
	addr, err := netlink.ParseAddr(ip + "/30")
	if err != nil {
		return err
	}
	if err := hd.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("address %s on %s: %w", ip, dev, err)
	}
	if err := hd.LinkSetUp(link); err != nil {
		return err
	}
	if gw != "" {
		if err := hd.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Gw: net.ParseIP(gw)}); err != nil {
			return fmt.Errorf("default route via %s: %w", gw, err)
		}
	}
	return nil
}

// Command is exec.Command for a program to run inside the namespace
// (through ip netns exec, which enters it and then execs the program, so
// the process's pid is the program's).
func (h *RemoteHost) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.Name, name}, args...)...)
}

// Close deletes the host's veth end (and with it the peer) and the
// namespace; it is fine to call on what is already gone.
func (h *RemoteHost) Close() error {
	var errs []error
	if link, err := netlink.LinkByName(h.HostIf); err == nil {
		errs = append(errs, netlink.LinkDel(link))
	}
	p := filepath.Join("/run/netns", h.Name)
	if _, err := os.Stat(p); err == nil {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
		errs = append(errs, os.Remove(p))
	}
	return errors.Join(errs...)
}
