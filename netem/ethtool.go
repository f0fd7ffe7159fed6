package netem

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offloads must be off on the veths: with TSO/GSO a TCP sender hands the
// stack 64 KB super-packets, and a random drop (or a netem loss) would then
// lose 40 frames at once; with GRO the router would merge frames again.

// ethtoolValue is struct ethtool_value from <linux/ethtool.h>.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with the ifr_data member (40 bytes on 64-bit).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// offload is one legacy ethtool get/set command pair.
type offload struct {
	name     string
	get, set uint32
}

var offloads = []offload{
	{"tso", unix.ETHTOOL_GTSO, unix.ETHTOOL_STSO},
	{"gso", unix.ETHTOOL_GGSO, unix.ETHTOOL_SGSO},
	{"gro", unix.ETHTOOL_GGRO, unix.ETHTOOL_SGRO},
}

func ethtoolIoctl(fd int, ifname string, v *ethtoolValue) error {
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], ifname)
	ifr.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SIOCETHTOOL), uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// disableOffloads turns TSO, GSO and GRO off on ifname inside the named
// namespace and reads them back.
func disableOffloads(nsName, ifname string) error {
	return inNamedNS(nsName, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		for _, o := range offloads {
			if err := ethtoolIoctl(fd, ifname, &ethtoolValue{cmd: o.set, data: 0}); err != nil {
				return fmt.Errorf("ethtool: turn %s off on %s: %w", o.name, ifname, err)
			}
			v := ethtoolValue{cmd: o.get}
			if err := ethtoolIoctl(fd, ifname, &v); err != nil {
				return fmt.Errorf("ethtool: read %s on %s: %w", o.name, ifname, err)
			}
			if v.data != 0 {
				return fmt.Errorf("ethtool: %s is still on on %s", o.name, ifname)
			}
		}
		return nil
	})
}

// offloadState reads TSO/GSO/GRO of ifname in the named namespace, for show.
func offloadState(nsName, ifname string) (map[string]bool, error) {
	state := map[string]bool{}
	err := inNamedNS(nsName, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for _, o := range offloads {
			v := ethtoolValue{cmd: o.get}
			if err := ethtoolIoctl(fd, ifname, &v); err != nil {
				return fmt.Errorf("ethtool: read %s on %s: %w", o.name, ifname, err)
			}
			state[o.name] = v.data != 0
		}
		return nil
	})
	return state, err
}
