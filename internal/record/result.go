package record

import (
	"fmt"
	"time"

	"pslab/internal/metrics"
	"pslab/internal/scenario"
)

// What one case run measured (the record's "result" block): the load
// engine (internal/load) fills these types, the analysis reads them.

// Counts are exact delivery counts of one case (replication grade: one
// expected delivery per matching subscriber per message).
type Counts struct {
	Sent             int64 `json:"sent"`               // messages published, all phases
	SentInWindow     int64 `json:"sent_in_window"`     // stamped inside the window
	Expected         int64 `json:"expected"`           // deliveries due for what was sent
	Received         int64 `json:"received"`           // distinct deliveries by the end of drain
	ReceivedInWindow int64 `json:"received_in_window"` // distinct deliveries received inside the window
	Late             int64 `json:"late"`               // distinct deliveries received after the window closed
	Lost             int64 `json:"lost"`               // due, not received, held nowhere (see Backlog)
	Duplicated       int64 `json:"duplicated"`
	Reordered        int64 `json:"reordered"`
	Redelivered      int64 `json:"redelivered"`   // flagged as redelivered by the broker
	DecodeErrors     int64 `json:"decode_errors"` // bodies that failed full decoding
	Unexpected       int64 `json:"unexpected"`    // deliveries that no subscriber should have had
	PublishErrors    int64 `json:"publish_errors"`
	// InDoubt counts sends a publisher's connection lost before the broker
	// confirmed them, or whose confirmation came back as an error (they may
	// or may not have been stored); Resent counts
	// messages a client library sent again after reconnecting. Both come
	// from drivers that reconnect by themselves (driver.ConnReporter).
	InDoubt int64 `json:"in_doubt,omitempty"`
	Resent  int64 `json:"resent,omitempty"`
	// Lost counts deliveries due, not received, and held nowhere: not
	// queued at the broker (Backlog) nor in the client library (InFlight).
	// Records without an accounting block (Result.Accounting, older
	// pslab) have Expected - Received there, which may include backlog.
	// Backlog counts deliveries due, not received, that the broker still
	// held for the case's subscriptions when the drain ended, by its own
	// count (driver.HeldReporter); not lost. InFlight counts those the
	// client library had received but not yet handed over. Dropped counts
	// messages the client library discarded as a slow consumer (part of
	// Lost). DueInWindow counts the deliveries due for messages sent inside
	// the window: the latency statistics cover those of them that arrived.
	Backlog  int64 `json:"backlog,omitempty"`
	InFlight int64 `json:"in_flight,omitempty"`
	// ToBroker counts deliveries due for sends still on their way to the
	// broker when the drain ended (Accounting.ToBrokerSends, each send
	// weighted by its publisher's deliveries per send); not lost.
	ToBroker    int64 `json:"to_broker,omitempty"`
	Dropped     int64 `json:"dropped,omitempty"`
	DueInWindow int64 `json:"due_in_window,omitempty"`
}

// Result is what one case run measured.
type Result struct {
	Start   time.Time `json:"start"`
	Connect float64   `json:"connect_s"` // connection set-up, excluded from measurement
	// PubTput and SubTput are sums over clients of each one's mean msgs/s in
	// the window (the paper's definition).
	PubTput float64                `json:"pub_tput"`
	SubTput float64                `json:"sub_tput"`
	Latency metrics.LatencySummary `json:"latency"`
	Counts  Counts                 `json:"counts"`
	// Per-second series from the start of the warm-up: messages published
	// and delivered (distinct) in each second.
	PubSeries []int64 `json:"pub_series"`
	SubSeries []int64 `json:"sub_series"`
	// DrainComplete: every expected delivery arrived before the drain ended.
	DrainComplete bool `json:"drain_complete"`
	// WarmupS is the warm-up as run (it ends when the delivery rate has
	// levelled off, see steady.go); the window starts after it.
	WarmupS float64 `json:"warmup_s"`
	// Accounting says how the drain ended, what the broker still held and
	// whether the warm-up reached a steady state.
	Accounting *Accounting `json:"accounting,omitempty"`
	// CloseS is how long closing every connection took; Unclosed counts
	// those still closing when the load engine's bound ran out, left to
	// finish in the background.
	CloseS  float64 `json:"close_s"`
	Aborted bool    `json:"aborted,omitempty"` // dropped, not closed (Config.AbortAtEnd)
	// InFlightStalls counts times a publisher at the case's in_flight bound
	// InFlightPeak is the most deliveries pending right after a publisher
	// passed the bound (it may exceed it by one message per publisher).
	InFlightPeak int64 `json:"in_flight_peak,omitempty"`
	// went on because no delivery had arrived for a second (see inFlight).
	InFlightStalls int64  `json:"in_flight_stalls,omitempty"`
	Unclosed       int    `json:"unclosed,omitempty"`
	FirstError     string `json:"first_error,omitempty"`
	// Pacer is what the open-loop pacer did (a case with a rate;
	// internal/load, pacer.go).
	Pacer *PacerStats `json:"pacer,omitempty"`
	// Faults are the case's scheduled faults as they happened.
	Faults []FaultResult `json:"faults,omitempty"`
	// Promises are what the case's mechanism promised (driver.Promiser),
	// where not the JMS factors' (nil), for the audit.
	Promises *Promises `json:"promises,omitempty"`
	// ClientOutages counts times a client connection was lost and the
	// driver noticed; UnexplainedOutages those that no scheduled fault
	// explains (the link or broker dropped a connection by itself).
	ClientOutages      int `json:"client_outages,omitempty"`
	UnexplainedOutages int `json:"unexplained_outages,omitempty"`
	// OutageCauses counts the client outages by the cause the client
	// reported ("unknown" when it gave none): a write deadline of the
	// client, the broker closing the connection, the link.
	OutageCauses map[string]int `json:"outage_causes,omitempty"`
	// TLS is what TLS cost the case's client connections (tls: on): the
	// handshakes and reconnections.
	TLS *TLS `json:"tls,omitempty"`

	// Interrupted: the run was cut short (SIGINT/SIGTERM); the numbers
	// cover only what was measured and are not a result of the case.
	Interrupted *Interruption `json:"interrupted,omitempty"`

	Histogram *metrics.Histogram `json:"-"`

	late LateKeys // resultLate keys the record it was read from lacked
}

// resultLate are Result's keys younger than the first committed records.
var resultLate = []string{"warmup_s"}

// UnmarshalJSON reads r and notes which late keys the JSON lacked.
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	return UnmarshalLate(data, (*plain)(r), &r.late, resultLate...)
}

// MarshalJSON writes r, leaving out the late keys its JSON lacked.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return MarshalLate(plain(r), r.late, resultLate...)
}

// Interruption says that a case run was cut short by its context (the
// user's SIGINT or SIGTERM): the numbers of its Result cover only what was
// measured before, and are no result of the case.
type Interruption struct {
	// Phase the run was in when it was interrupted: "warmup", "window" or
	// "drain".
	Phase string `json:"phase"`
	// WindowMeasuredS is how much of the measurement window had passed
	// (0 in the warm-up, the whole window in the drain).
	WindowMeasuredS float64 `json:"window_measured_s"`
}

// FaultResult is one scheduled fault as it happened.
type FaultResult struct {
	scenario.Fault
	// StartS and EndS are when it was applied and when it had been undone
	// (the link restored, the broker accepting clients, the subscribers
	// subscribed again), in seconds since the warm-up began: the origin of
	// the per-second series.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	Detail string  `json:"detail,omitempty"`
	Error  string  `json:"error,omitempty"`
	// DueWhile counts the deliveries due to the affected subscribers for
	// messages published from StartS to EndS.
	DueWhile int64 `json:"due_while"`
	// Reconnected counts client connections that came back after losing
	// their connection in this fault (for subscriber-disconnect: the
	// subscribers connected again), NotReconnected those that did not;
	// ReconnectS is the longest time from the fault's end (or, for
	// subscriber-disconnect, from the start of connecting again) until a
	// client was usable.
	Reconnected    int     `json:"reconnected"`
	NotReconnected int     `json:"not_reconnected,omitempty"`
	ReconnectS     float64 `json:"reconnect_s"`
	// Backlog counts distinct deliveries, after the fault ended, of
	// messages published before it ended (for subscriber-disconnect, it
	// ends for a subscriber when that subscriber starts subscribing
	// again); CatchupS is from the fault's end to the last of them (0 with
	// no backlog).
	Backlog  int64   `json:"backlog"`
	CatchupS float64 `json:"catchup_s"`
	// Sessions counts, per role, the reconnections of this fault (for
	// subscriber-disconnect: the subscribers connecting again) after
	// which the broker said whether it had kept the client's session
	// (MQTT's CONNACK session present, for a client that asked to keep
	// it); nil where no client's protocol gives that answer (NATS, STOMP)
	// or none asked.
	Sessions *FaultSessions `json:"sessions,omitempty"`
}

// FaultSessions is what the broker answered about the clients' sessions
// on reconnecting after a fault, per role.
type FaultSessions struct {
	Publishers  SessionCounts `json:"publishers"`
	Subscribers SessionCounts `json:"subscribers"`
}

// SessionCounts counts reconnections whose broker said it had kept the
// client's session (Resumed: MQTT session present 1) or had not (Gone:
// session present 0; the session's state, its QoS 1/2 packet
// identifiers included, was lost and a new one begun).
type SessionCounts struct {
	Resumed int `json:"resumed"`
	Gone    int `json:"gone"`
}

// Add counts one answer.
func (c *SessionCounts) Add(resumed bool) {
	if resumed {
		c.Resumed++
	} else {
		c.Gone++
	}
}

// Gone sums the reconnections, in both roles, whose broker kept no
// session.
func (s *FaultSessions) Gone() int {
	if s == nil {
		return 0
	}
	return s.Publishers.Gone + s.Subscribers.Gone
}

// String says the counts in words: "sessions resumed/gone: publishers
// 0/1, subscribers 2/0".
func (s *FaultSessions) String() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("sessions resumed/gone: publishers %d/%d, subscribers %d/%d",
		s.Publishers.Resumed, s.Publishers.Gone, s.Subscribers.Resumed, s.Subscribers.Gone)
}

// PacerStats is what an open-loop case's pacers did (Result.Pacer; internal/load, pacer.go).
// Released counts the messages released and Wakes the wake-ups that
// released some (summed over publishers), MaxBatch the most one publisher
// released at one wake-up. LagMeanMs and LagMaxMs are how late messages
// were released after the tick they were scheduled for (from the wake-up's
// clock reading: the message left at or after it): latency, counted from
// that tick, includes this lag. A lag of a tick or more means the
// publishers fell behind their schedule (the client's CPU or flow control
// held them). Records made before 2026-11-26 evening counted from the due
// time: their lag includes about half a tick of the pacer's own wait.
type PacerStats struct {
	TickUs    float64 `json:"tick_us"`
	Released  int64   `json:"released"`
	Wakes     int64   `json:"wakes"`
	MaxBatch  int64   `json:"max_batch"`
	LagMeanMs float64 `json:"lag_mean_ms"`
	LagMaxMs  float64 `json:"lag_max_ms"`
}
