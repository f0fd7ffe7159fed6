package nats

import "pslab/internal/driver"

// SetCorePendingLimit sets the pending limit (messages) of the core
// subscriptions d opens from now on, so a test's slow consumer makes
// nats.go drop messages soon.
func SetCorePendingLimit(d driver.Driver, msgs int) { d.(*Driver).corePendingMsgs = msgs }
