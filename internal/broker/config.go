package broker

// Configured is a broker that can say what its effective configuration
// is: its settings and configuration files as they decide how it runs,
// without what differs between instances of one configuration (paths,
// addresses, ports, passwords), so that two labs' instances of the same
// configuration hash alike (results.ConfigHash) and two configurations
// do not.
type Configured interface {
	EffectiveConfig() (settings map[string]string, files map[string][]byte, err error)
}
