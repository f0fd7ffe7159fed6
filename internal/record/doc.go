// Package record holds the plain types of pslab's result records, the
// JSON schema every tool reads: the load engine fills them, results writes
// and reads bundles of them, and audit, report, model and plot read them.
// It imports no broker client, netlink or nftables, so the analysis side
// builds without them.
package record
