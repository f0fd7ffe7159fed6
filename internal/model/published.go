package model

import (
	"fmt"
	"strings"
)

// Published is a parameter set printed in one of the papers. The values
// hold only for the papers' hardware (3.2 GHz single-CPU machines, Java
// 1.4, 2005) and the papers' JMS servers; they are here for comparison.
type Published struct {
	Name   string `json:"name"`
	Form   Form   `json:"-"`
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

// PublishedSets are the parameter sets of papers 000, 001 and 003.
func PublishedSets() []Published {
	return []Published{
		{
			Name:   "fiorano-corrid",
			Form:   Fiorano{TRcv: 8.52e-7, TFltr: 7.02e-6, TTx: 1.70e-5},
			Source: "Henjes, Menth, Gehrsitz: FioranoMQ (paper 000), Table 1, correlation ID filtering; same values in paper 001 §2.2.1",
			Note:   "fitted to the overall throughput (r+1)/B of Fig. 13",
		},
		{
			Name:   "fiorano-appprop",
			Form:   Fiorano{TRcv: 4.10e-6, TFltr: 1.46e-5, TTx: 1.62e-5},
			Source: "Henjes, Menth, Gehrsitz: FioranoMQ (paper 000), Table 1, application property filtering; same values in paper 001 §2.2.1",
			Note:   "fitted to the overall throughput (r+1)/B of Fig. 14",
		},
		{
			Name:   "sunmq",
			Form:   SunMQ{TRcv: 1.14e-4, TFltrAll: 2.10e-6, TFltrDiff: 2.12e-6, TTx: 4.01e-5},
			Source: "Henjes, Menth, Gehrsitz, Zepfel: Popular JMS servers (paper 001) §2.2.2, Eq. (2), correlation ID and application property filters alike",
			Note:   "the text of paper 001 is garbled around these symbols; 2.10e-6 s is read as t_fltr^all and 2.12e-6 s as t_fltr^diff (order of appearance). Swapping them changes B by 0.02 µs per filter",
		},
		{
			Name:   "websphere",
			Form:   WebsphereMQ{TRcv: 7.03e-4, TFltr: 1.1017e-5},
			Source: "Henjes, Menth, Zepfel: WebsphereMQ (paper 003) §IV-H, Eq. (1), best least-squares fit; paper 001 §2.2.3 rounds t_fltr to 1.10e-5 s",
			Note:   "fitted to received (Fig. 11) and overall (Fig. 12) throughput, application property filters; correlation ID filters gave the same",
		},
	}
}

// publishedAliases map short names to a published set.
var publishedAliases = map[string]string{"fiorano": "fiorano-corrid"}

// PublishedByName returns the named set; "fiorano" means fiorano-corrid.
func PublishedByName(name string) (Published, error) {
	if a, ok := publishedAliases[name]; ok {
		name = a
	}
	var names []string
	for _, p := range PublishedSets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Published{}, fmt.Errorf("no published parameter set %q (known: %s; fiorano = fiorano-corrid)", name, strings.Join(names, ", "))
}
