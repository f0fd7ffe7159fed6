package mosquitto

// EffectiveConfig implements broker.Configured: the record's settings
// without the listener's address and the run directory, which differ
// between starts of one configuration. The rest of mosquitto.conf is
// pslab's code (config.go), so the pslab build a record names covers it;
// persistence, set per case, is said by the case's delivery.
func (m *Mosquitto) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	settings := m.Settings()
	delete(settings, "listener")
	delete(settings, "run_dir")
	settings["version"] = m.Version()
	return settings, nil, nil
}
