package main

import (
	"pslab/internal/cpuset"
)

// parseCPUs reads --cpus against the CPUs this process may use.
func parseCPUs(v string) (cpuset.Plan, error) {
	allowed, err := cpuset.Allowed()
	if err != nil {
		return cpuset.Plan{}, err
	}
	p, err := cpuset.ParseFlag(v, allowed)
	if err != nil {
		return cpuset.Plan{}, badInput(err)
	}
	return p, nil
}
