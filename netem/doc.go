// Package netem emulates a network link between clients and a broker inside
// three Linux network namespaces made by the package itself:
//
//	<prefix>-cli (clients) --veth-- <prefix>-rtr (router, the emulator) --veth-- <prefix>-brk (broker)
//
// A Profile (loaded from YAML, see profiles/) says what the link does: rate,
// loss, loss correlation, delay, jitter, duplication and whether both
// directions share one rate budget (half duplex, like a radio channel) or have
// one each (full duplex). Lab builds the topology over netlink and applies a
// profile with one of two backends, chosen at run time:
//
//   - "netem": the netem qdisc on the router, where the kernel has sch_netem;
//   - "tbf+nftables": a TBF qdisc for the rate plus random drop rules in the
//     router's nftables forward chain. Profiles that need delay, jitter,
//     duplication or loss correlation are refused on this backend, never
//     approximated.
//
// Options.BrokerPID puts the broker side into another process's network
// namespace instead (a broker container's): the lab then adds only its veth
// end, address and route there, and removes only those.
//
// Every profile, wireline too, goes through the router, so the paths differ
// only in the impairments. The package never touches an interface or a
// namespace outside its own (but for that one veth end in a BrokerPID's
// namespace), and tears everything down idempotently (also at start, so a
// crashed run leaves nothing behind). All namespace switching
// happens on locked OS threads that are restored (or left to die locked), so
// the package is safe in programs that run other goroutines.
//
// Everything but profile loading needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN);
// Supported says whether this process can run the lab.
//
// The package imports nothing of pslab's, but it is not public: the module
// path is "pslab", which other modules cannot import (docs/netem.md).
package netem
