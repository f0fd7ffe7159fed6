package nats

// EffectiveConfig implements Configured: pslab's settings of its child
// nats-server (Settings) without what differs between instances of one
// configuration (the JetStream store and the monitoring address). The
// child's other options are pslab's code (child.go), so the pslab build
// a record names covers them.
func (n *Server) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	settings := n.Settings()
	delete(settings, "jetstream_store")
	delete(settings, "monitor")
	settings["version"] = n.Version()
	return settings, nil, nil
}

// EffectiveConfig implements Configured for nats-mqtt: the server's, with
// its MQTT settings but not the listener's address.
func (m *mqttServer) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	settings := m.Settings()
	for _, k := range []string{"jetstream_store", "monitor", "mqtt_listener"} {
		delete(settings, k)
	}
	settings["version"] = m.Version()
	return settings, nil, nil
}
