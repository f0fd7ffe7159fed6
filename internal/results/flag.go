package results

import (
	"fmt"
	"strings"
)

// FlagName names a reason not to take a record's numbers at face value.
// Code reads flags back by these names, never by their text.
type FlagName string

// The flags the lab sets (internal/lab/flags.go and the case steps).
const (
	FlagCPUSaturated     FlagName = "cpu-saturated"
	FlagClientBound      FlagName = "client-bound"
	FlagDrainIncomplete  FlagName = "drain-incomplete"
	FlagPublishErrors    FlagName = "publish-errors"
	FlagBadDeliveries    FlagName = "bad-deliveries"
	FlagSlowClose        FlagName = "slow-close"
	FlagAuditFailed      FlagName = "audit-failed"
	FlagInFlightStalled  FlagName = "in-flight-stalled"
	FlagConnectionsLost  FlagName = "connections-lost"
	FlagNoDeliveries     FlagName = "no-deliveries-in-window"
	FlagNotSaturated     FlagName = "not-saturated"
	FlagLoopback         FlagName = "loopback"
	FlagLinkBusy         FlagName = "link-busy"
	FlagBrokerRestarted  FlagName = "broker-restarted"
	FlagResetFailed      FlagName = "reset-failed"
	FlagPurgeAfterFailed FlagName = "purge-after-failed"
	FlagSimulated        FlagName = "simulated"
	FlagInterrupted      FlagName = "interrupted"
	FlagFewDeliveries    FlagName = "few-deliveries"
	FlagBacklog          FlagName = "backlog"
	FlagLostUnverified   FlagName = "lost-unverified"
	FlagNoSendsInWindow  FlagName = "no-sends-in-window"
	FlagNoLatency        FlagName = "no-latency"
	FlagNotSteady        FlagName = "not-steady"
	FlagSubExceedsPub    FlagName = "sub-exceeds-pub"
	FlagMachineBusy      FlagName = "machine-busy"
	FlagHostNetwork      FlagName = "host-network"
	FlagLinkOff          FlagName = "link-off"
	FlagConnectRetried   FlagName = "connect-retried"
)

// Flag is one reason not to trust a record's numbers as they stand: a
// name and a detail for the reader. In JSON it is the string
// "name: detail", as records have always held it.
type Flag struct {
	Name   FlagName
	Detail string
}

// NewFlag makes a flag whose detail is formatted like fmt.Sprintf.
func NewFlag(name FlagName, format string, a ...any) Flag {
	return Flag{Name: name, Detail: fmt.Sprintf(format, a...)}
}

// String is "name: detail" (or the name alone without a detail).
func (f Flag) String() string {
	if f.Detail == "" {
		return string(f.Name)
	}
	return string(f.Name) + ": " + f.Detail
}

// MarshalText writes f as "name: detail".
func (f Flag) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads "name: detail" (the name is what precedes the
// first ':').
func (f *Flag) UnmarshalText(b []byte) error {
	*f = ParseFlag(string(b))
	return nil
}

// ParseFlag reads a flag from its "name: detail" text.
func ParseFlag(s string) Flag {
	name, detail, _ := strings.Cut(s, ":")
	return Flag{Name: FlagName(strings.TrimSpace(name)), Detail: strings.TrimSpace(detail)}
}

// Flagged finds the first flag called name.
func Flagged(flags []Flag, name FlagName) (Flag, bool) {
	for _, f := range flags {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}
