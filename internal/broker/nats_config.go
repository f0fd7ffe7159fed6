package broker

// EffectiveConfig implements Configured: pslab's settings of its child
// nats-server (Settings) without what differs between instances of one
// configuration (the JetStream store and the monitoring address). The
// child's other options are pslab's code (child.go), so the pslab build
// a record names covers them.
func (n *NATS) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	settings := n.Settings()
	delete(settings, "jetstream_store")
	delete(settings, "monitor")
	settings["version"] = n.Version()
	return settings, nil, nil
}
