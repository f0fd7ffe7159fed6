package report

import (
	"fmt"
	"sort"

	"pslab/internal/results"
)

// FlagMeanings says, for every flag a record can carry, why its numbers
// should not be taken at face value (README.md's flag table says the
// same at more length; a test keeps both complete).
var FlagMeanings = map[results.FlagName]string{
	results.FlagClientBound:      "the load clients used at least 60 % of their own CPU set (the paper kept every client host under 60 %): the number is pslab's, not the broker's",
	results.FlagCPUSaturated:     "only with --cpus off: client and broker used at least 90 % of the machine's CPU: the machine bounds the number",
	results.FlagDrainIncomplete:  "some expected deliveries had not arrived when the drain ended: why it ended, and how they split into backlog, in flight and lost",
	results.FlagBacklog:          "the broker still held deliveries for the case when the drain ended (its own count): they are not counted lost",
	results.FlagLostUnverified:   "the broker could not be asked what it holds: lost may include backlog",
	results.FlagNotSteady:        "the delivery rate had not levelled off by the end of the (bounded) warm-up",
	results.FlagNoSendsInWindow:  "the publishers sent nothing in the window (flow control held them): publisher throughput and latency are not measured",
	results.FlagNoLatency:        "none of the window's messages arrived: latency is not measured",
	results.FlagSubExceedsPub:    "the window delivered over 1.1 times what was due for what its publishers sent in it: a backlog from before the window",
	results.FlagPublishErrors:    "publishes were refused or failed (the first error is in the record)",
	results.FlagBadDeliveries:    "bodies failed decoding, or deliveries came outside a subscriber's topic or selector",
	results.FlagNoDeliveries:     "nothing arrived in the window: throughput and latency are not measured",
	results.FlagFewDeliveries:    "fewer than 1000 deliveries arrived in the window: throughput and latency rest on a handful of bursts (lengthen the window, per_network in the scenario file)",
	results.FlagLoopback:         "not root: no emulating router on the path",
	results.FlagAuditFailed:      "a delivery promise of the case's combination was not kept (the record's audit)",
	results.FlagConnectionsLost:  "client connections dropped that no scheduled fault explains (with the broker's reasons where it gives them)",
	results.FlagSlowClose:        "connections were still closing 15 s after the case (the close's bound)",
	results.FlagInFlightStalled:  "a publisher waited at its in_flight bound with no delivery arriving (deliveries went missing) and went on",
	results.FlagNotSaturated:     "a capacity case (capacity: on) whose broker was not saturated: not a capacity measurement",
	results.FlagLinkBusy:         "the emulated link still carried the previous case's traffic when the idle wait gave up (30 s)",
	results.FlagBrokerRestarted:  "the broker had died on its own, or stopped answering the purge, and was restarted before this case (how it ended is given)",
	results.FlagResetFailed:      "the sockets the case's dropped connections left on the broker could not be destroyed",
	results.FlagPurgeAfterFailed: "the purge after the case failed (the next case's purge retries it); the case's numbers stand",
	results.FlagSimulated:        "the broker was the in-memory fake (--broker fake): nothing in the record measures a broker",
	results.FlagMachineBusy:      "processes outside the run used at least 10 % of the machine's CPU in the window",
	results.FlagHostNetwork:      "an external broker (--url) reached over the host network: no emulating router on the path",
	results.FlagInterrupted:      "the case was cut short by SIGINT/SIGTERM: left out of report, plot and model",
	results.FlagConnectRetried:   "connecting the case's clients failed once (the error is given): what that attempt left was closed and purged, and the case ran again from the start; its numbers are the second run's",
	results.FlagLinkOff:          "the emulated link, verified from outside before the cases, was out of tolerance (goodput or mean ping RTT off by over 10 %, probe loss by over 1 point, or loss runs by over 20 %): the link was not quite the profile",
}

// FlagMeaning is a flag's meaning, or "" for a name this pslab does not
// know (a record of another version).
func FlagMeaning(name string) string { return FlagMeanings[results.FlagName(name)] }

// FlagSummary is one flag over a set of rows: how many records carry it,
// where, and its first full text.
type FlagSummary struct {
	Name    string   `json:"name"`
	Meaning string   `json:"meaning"`
	Records int      `json:"records"`
	Where   []string `json:"where"` // case/broker/network
	First   string   `json:"first"` // the first record's "name: detail"
}

// FlagsOf summarises the flags of the groups of a suite ("" : every
// suite), by name.
func FlagsOf(d *Dataset, suite string) []FlagSummary {
	byName := map[string]*FlagSummary{}
	for _, g := range d.Groups {
		if suite != "" && g.Suite != suite {
			continue
		}
		for n, k := range g.Flags {
			a := byName[n]
			if a == nil {
				a = &FlagSummary{Name: n, Meaning: FlagMeaning(n), First: g.FlagText[n]}
				byName[n] = a
			}
			a.Records += k
			where := fmt.Sprintf("%s/%s/%s", g.Case, g.Broker, g.Network)
			if suite == "" {
				where = g.Suite + " " + where
			}
			a.Where = append(a.Where, where)
		}
	}
	var out []FlagSummary
	for _, a := range byName {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
