package driver

// SetNATSCorePendingLimit sets the pending limit (messages) of the core
// subscriptions d opens from now on, so a test's slow consumer makes
// nats.go drop messages soon.
func SetNATSCorePendingLimit(d Driver, msgs int) { d.(*NATS).corePendingMsgs = msgs }
