package results

// Machine names the host a record was measured on.
type Machine struct {
	Hostname string `json:"hostname"`
	Cores    int    `json:"cores"`
	CPUModel string `json:"cpu_model,omitempty"` // "model name" of /proc/cpuinfo
}

// Order is where a case run stood in its network's schedule: repetitions
// run in rounds (each round runs every case row still short of its
// target once), in an order drawn from Seed when the suite asks for
// `order: random`.
type Order struct {
	Random   bool  `json:"random"`
	Seed     int64 `json:"seed,omitempty"` // the order's seed (random only)
	Round    int   `json:"round"`          // 1-based
	Position int   `json:"position"`       // 1-based, within the round
}
