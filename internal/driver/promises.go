package driver

import (
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Promiser is implemented by drivers whose cases promise something other
// than the JMS factors do (MQTT: by QoS); the load engine puts the
// promises into the case's result for the audit.
type Promiser interface {
	Promises(f scenario.Factors) *record.Promises
}
