package record

// Promises is what a case's mechanism promises about delivery, where it is
// not what the paper's JMS factors promise (internal/audit checks them):
// MQTT's quality of service decides them, and the broker's persistence.
// Kept in each record's result (driver.Promiser fills it), so that a
// report evaluates the audit again with the promises the run had.
type Promises struct {
	// Basis names where the promises come from, e.g. "MQTT QoS 1 (at
	// least once)".
	Basis string `json:"basis"`
	// KeepsWhileAway: a durable subscription keeps what is published while
	// its subscriber is away (a subscriber disconnect, a link outage), and
	// nothing is lost beyond sends in doubt.
	KeepsWhileAway bool `json:"keeps_while_away"`
	// SurvivesRestart: what the broker holds (messages and the state that
	// keeps duplicates out) survives a kill of the broker.
	SurvivesRestart bool `json:"survives_restart"`
	// NoDuplicates: no delivery ever comes twice (at most once, exactly
	// once), as long as the broker's state survives.
	NoDuplicates bool `json:"no_duplicates"`
	// Why says, in words, what limits the promises (e.g. "Mosquitto writes
	// its store every second").
	Why string `json:"why,omitempty"`
}
