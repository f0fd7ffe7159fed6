package netem

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The relay is the user-space link: a process of pslab's own binary
// (started again with relayEnv set, see RunRelayIfRequested) that lives in
// the router namespace. It reads every IPv4 frame arriving on the router's
// two veths with AF_PACKET sockets, runs it through the link engine
// (engine.go), and writes what the link delivers out of the other veth,
// with the Ethernet addresses a router would put on it. The kernel of the
// router namespace no longer forwards what comes in on the link's two
// veths (net.ipv4.conf.DEV.forwarding 0 on them, so it drops those frames
// itself, silently: no ICMP with forwarding off), but it still answers
// ARP for the router's addresses. One thread does
// everything in an epoll loop: the two sockets and a timerfd armed for the
// engine's next event, so a frame leaves at its time to the microsecond,
// without spinning.

// relayEnv marks a process started as the relay; its value is the lab's
// prefix (cleanup finds relays by it).
const relayEnv = "PSLAB_NETEM_RELAY"

// relayConfig is what the relay process is told on its fd 3.
type relayConfig struct {
	Prefix   string  `json:"prefix"`
	Profile  Profile `json:"profile"`
	Seed     uint64  `json:"seed"`
	TraceUp  []int64 `json:"trace_up,omitempty"`
	TraceDn  []int64 `json:"trace_down,omitempty"`
	CliIf    string  `json:"cli_if"`  // router veth facing the clients
	BrkIf    string  `json:"brk_if"`  // router veth facing the broker
	CliMAC   string  `json:"cli_mac"` // the clients' end of the veth
	BrkMAC   string  `json:"brk_mac"` // the broker side's end
	Socket   string  `json:"socket"`  // control socket path
	Detached bool    `json:"detached"`
	Latency  bool    `json:"latency,omitempty"` // time reads and writes (relayLatencyEnv)
}

// relayState is what the control socket answers.
type relayState struct {
	Pid      int                 `json:"pid"`
	Seed     uint64              `json:"seed"`
	Profile  string              `json:"profile"`
	Counters [2]RelayDirCounters `json:"counters"` // to-broker, to-client
	Error    string              `json:"error,omitempty"`
	Latency  *relayLatency       `json:"latency,omitempty"` // the "latency" op
}

// relayRequest is one control request: "state", "fault" (Pct), "stop",
// "latency" (relayLatency, then reset).
type relayRequest struct {
	Op  string  `json:"op"`
	Pct float64 `json:"pct,omitempty"`
}

// RunRelayIfRequested turns this process into the relay when pslab started
// it as one, and never returns then. Call it first thing in main (and in
// TestMain of test binaries that apply relay profiles); Apply refuses the
// relay backend in a program that does not.
func RunRelayIfRequested() {
	relayCapable = true
	if os.Getenv(relayEnv) == "" {
		return
	}
	err := runRelay(os.NewFile(3, "relay-config"), os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stdout, "error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// relayCapable is set by RunRelayIfRequested: this binary can be the relay.
var relayCapable bool

// relayPort is one of the two veths.
type relayPort struct {
	fd      int
	name    string
	ownMAC  net.HardwareAddr // the router's end
	peerMAC net.HardwareAddr // the other end: where frames out of here go
}

func runRelay(cfgFile *os.File, status io.Writer) error {
	unpinAllThreads()
	r := bufio.NewReader(cfgFile)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	var cfg relayConfig
	if err := json.Unmarshal(line, &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var up, down *Trace
	if cfg.TraceUp != nil {
		up, down = &Trace{Ms: cfg.TraceUp, Source: "up"}, &Trace{Ms: cfg.TraceDn, Source: "down"}
	}
	cfg.Profile.Seed = float64(cfg.Seed)
	var ports [2]*relayPort // by the direction of the frames read there
	for d, dev := range []string{cfg.CliIf, cfg.BrkIf} {
		p, err := openPort(dev, cfg.Latency)
		if err != nil {
			return err
		}
		defer unix.Close(p.fd)
		ports[d] = p
	}
	// Frames read on the clients' side go out on the broker's, to its MAC.
	out := [2]*relayPort{dirToBroker: ports[dirToClient], dirToClient: ports[dirToBroker]}
	var err1, err2 error
	out[dirToBroker].peerMAC, err1 = net.ParseMAC(cfg.BrkMAC)
	out[dirToClient].peerMAC, err2 = net.ParseMAC(cfg.CliMAC)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("timerfd: %w", err)
	}
	defer unix.Close(tfd)
	ln, err := listenControl(cfg.Socket)
	if err != nil {
		return err
	}
	defer os.Remove(cfg.Socket)
	defer ln.Close()

	rl := &relayLoop{cfg: cfg, in: ports, out: out, tfd: tfd,
		eng: newEngine(cfg.Profile, up, down, monoNow())}
	if cfg.Latency {
		rl.lat = &relayLatency{}
	}
	go rl.serveControl(ln)
	if !cfg.Detached {
		// The parent holds the other end of fd 3: when it dies, however
		// it dies, the read ends and so does the relay.
		go func() {
			_, _ = io.Copy(io.Discard, r)
			rl.stop("the process that started the relay is gone")
		}()
	}
	fmt.Fprintf(status, "ready %d\n", os.Getpid())
	return rl.run()
}

// unpinAllThreads lets the relay run on every online CPU, as the kernel's
// own forwarding does, whatever CPU set the process that started it was
// confined to (pslab pins its clients). Best effort.
func unpinAllThreads() {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return
	}
	var set unix.CPUSet
	for _, r := range strings.Split(strings.TrimSpace(string(data)), ",") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err2 != nil {
			b, err2 = a, nil
		}
		if err1 != nil {
			return
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = unix.SchedSetaffinity(tid, &set)
		}
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// vnetHdr is the virtio_net_hdr the sockets read and write before each
// frame (PACKET_VNET_HDR). The veths leave TCP and UDP checksums to be
// filled in later (CHECKSUM_PARTIAL); the header carries that state from
// the frame read to the frame written, so the kernel fills them in as it
// would for a frame it forwarded itself. Without it the relay's copies
// would reach the broker with unfinished checksums and be dropped.
const vnetHdr = 10

// openPort opens a non-blocking AF_PACKET socket on dev that reads only
// IPv4 frames addressed to this host (a classic BPF filter: EtherType
// 0x0800, packet type PACKET_HOST), never the frames sent out of it.
// With stamps the kernel stamps each frame's arrival (SO_TIMESTAMPNS).
func openPort(dev string, stamps bool) (*relayPort, error) {
	ifc, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, fmt.Errorf("relay: %s: %w", dev, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("relay: AF_PACKET socket: %w", err)
	}
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_H | unix.BPF_ABS, K: 12},                              // EtherType
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 3, K: unix.ETH_P_IP},    // IPv4?
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: uint32(0xfffff000 + 4)},          // SKF_AD_OFF + SKF_AD_PKTTYPE
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.PACKET_HOST}, // to us?
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffff},                                        // take it
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},                                             // leave it
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	steps := []struct {
		what string
		err  error
	}{
		{"attach filter", unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog)},
		{"ignore outgoing", unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)},
		{"virtio-net header", unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1)},
		{"receive buffer", unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)},
		{"send buffer", unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)},
		{"timestamps", setIf(stamps, fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)},
		{"bind", unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index})},
	}
	for _, s := range steps {
		if s.err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("relay: %s: %s: %w", dev, s.what, s.err)
		}
	}
	return &relayPort{fd: fd, name: dev, ownMAC: ifc.HardwareAddr}, nil
}

// setIf sets an integer socket option when on is true.
func setIf(on bool, fd, level, opt, v int) error {
	if !on {
		return nil
	}
	return unix.SetsockoptInt(fd, level, opt, v)
}

// relayLoop is the running relay.
type relayLoop struct {
	cfg relayConfig
	in  [2]*relayPort // read here: frames of direction d
	out [2]*relayPort // write here: frames of direction d
	tfd int

	mu      sync.Mutex // eng, rxDrops, stopped
	eng     *engine
	rxDrops [2]uint64
	txDrops [2]uint64
	stopped string
	wake    int           // eventfd to wake the loop (stop)
	lat     *relayLatency // with cfg.Latency
}

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func (rl *relayLoop) stop(why string) {
	rl.mu.Lock()
	if rl.stopped == "" {
		rl.stopped = why
	}
	w := rl.wake
	rl.mu.Unlock()
	if w > 0 {
		var one [8]byte
		one[0] = 1
		_, _ = unix.Write(w, one[:])
	}
}

// run is the event loop, on one locked OS thread.
func (rl *relayLoop) run() error {
	runtime.LockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll: %w", err)
	}
	defer unix.Close(ep)
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	defer unix.Close(wake)
	rl.mu.Lock()
	rl.wake = wake
	stopped := rl.stopped
	rl.mu.Unlock()
	if stopped != "" {
		return nil
	}
	for _, fd := range []int{rl.in[0].fd, rl.in[1].fd, rl.tfd, wake} {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return fmt.Errorf("epoll add: %w", err)
		}
	}
	events := make([]unix.EpollEvent, 8)
	buf := make([]byte, 65536)
	var ready []*enginePkt
	var scratch [8]byte
	for {
		if _, err := unix.EpollWait(ep, events, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("epoll wait: %w", err)
		}
		_, _ = unix.Read(rl.tfd, scratch[:])
		rl.mu.Lock()
		if rl.stopped != "" {
			rl.mu.Unlock()
			return nil
		}
		for d := range rl.in {
			if err := rl.readAll(d, buf, &ready); err != nil {
				rl.mu.Unlock()
				return err
			}
		}
		now := monoNow()
		ready = rl.eng.advance(now, ready)
		for _, p := range ready {
			rl.send(p)
		}
		clear(ready)
		ready = ready[:0]
		next, ok := rl.eng.nextEvent()
		rl.mu.Unlock()
		var spec unix.ItimerSpec
		if ok {
			spec.Value = unix.NsecToTimespec(max(next, 1))
		}
		if err := unix.TimerfdSettime(rl.tfd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			return fmt.Errorf("timerfd: %w", err)
		}
	}
}

// readAll reads every frame waiting on port d and offers it to the link
// (rl.mu held). A frame is offered at the time it is read.
func (rl *relayLoop) readAll(d int, buf []byte, ready *[]*enginePkt) error {
	port := rl.in[d]
	var oob [64]byte
	for {
		var n int
		var err error
		if rl.lat != nil {
			var oobn int
			n, oobn, _, _, err = unix.Recvmsg(port.fd, buf, oob[:], unix.MSG_TRUNC)
			if err == nil {
				rl.lat.addRead(d, rxStampNs(oob[:oobn]), realNow())
			}
		} else {
			n, _, err = unix.Recvfrom(port.fd, buf, unix.MSG_TRUNC)
		}
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("relay: read %s: %w", port.name, err)
		}
		if n > len(buf) || n < vnetHdr+ethHeader+ipv4Header {
			rl.rxDrops[d]++
			continue
		}
		frameLen := n - vnetHdr
		ip := buf[vnetHdr+ethHeader:]
		ipLen := int(ip[2])<<8 | int(ip[3])
		if ipLen < ipv4Header || ipLen > frameLen-ethHeader {
			ipLen = frameLen - ethHeader
		}
		p := &enginePkt{frame: append([]byte(nil), buf[:n]...), frameLen: frameLen, ipLen: ipLen, dir: d}
		now := monoNow()
		*ready = rl.eng.advance(now, *ready)
		rl.eng.arrive(now, p)
	}
}

// send writes a delivered frame out of the other veth, addressed as a
// router addresses it: to the next hop's MAC, from its own.
func (rl *relayLoop) send(p *enginePkt) {
	port := rl.out[p.dir]
	copy(p.frame[vnetHdr:vnetHdr+6], port.peerMAC)
	copy(p.frame[vnetHdr+6:vnetHdr+12], port.ownMAC)
	var t0 int64
	if rl.lat != nil {
		t0 = monoNow()
	}
	if _, err := unix.Write(port.fd, p.frame); err != nil {
		rl.txDrops[p.dir]++
	}
	if rl.lat != nil {
		rl.lat.Write[p.dir].add(monoNow() - t0)
	}
}

// state is the answer to a state request: the engine's counters with the
// sockets' drops (the kernel's PACKET_STATISTICS, which reset on read).
func (rl *relayLoop) state() relayState {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for d, p := range rl.in {
		var st unix.TpacketStats
		l := uint32(unsafe.Sizeof(st))
		if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(p.fd), unix.SOL_PACKET, unix.PACKET_STATISTICS,
			uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&l)), 0); e == 0 {
			rl.rxDrops[d] += uint64(st.Drops)
		}
	}
	c := rl.eng.counters(monoNow())
	for d := range c {
		c[d].DropRx += rl.rxDrops[d]
		c[d].DropTx += rl.txDrops[d]
	}
	return relayState{Pid: os.Getpid(), Seed: rl.cfg.Seed, Profile: rl.cfg.Profile.Name, Counters: c}
}

func listenControl(path string) (*net.UnixListener, error) {
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("relay: control socket: %w", err)
	}
	_ = os.Chmod(path, 0o600)
	return ln, nil
}

// serveControl answers requests, one JSON line each.
func (rl *relayLoop) serveControl(ln *net.UnixListener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			enc := json.NewEncoder(c)
			for sc.Scan() {
				var req relayRequest
				if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
					_ = enc.Encode(relayState{Error: err.Error()})
					continue
				}
				switch req.Op {
				case "state":
					_ = enc.Encode(rl.state())
				case "fault":
					rl.mu.Lock()
					rl.eng.setFault(req.Pct)
					rl.mu.Unlock()
					_ = enc.Encode(rl.state())
				case "latency":
					rl.mu.Lock()
					var lat relayLatency
					if rl.lat != nil {
						lat, *rl.lat = *rl.lat, relayLatency{}
					}
					rl.mu.Unlock()
					st := rl.state()
					st.Latency = &lat
					_ = enc.Encode(st)
				case "stop":
					_ = enc.Encode(rl.state())
					rl.stop("asked to stop")
					return
				default:
					_ = enc.Encode(relayState{Error: "unknown op " + strconv.Quote(req.Op)})
				}
			}
		}()
	}
}
