package load

import "time"

// phaseOf staggers the schedules of open-loop publishers (rate > 0): the
// schedule of publisher i of P starts i/P of a send interval early, so
// its first send is due within the first interval and the P publishers'
// sends are spread evenly over each interval instead of all falling due
// at the same instants. At the low rates per publisher a capacity search
// probes over a 1 Mbit/s link (400 publishers sharing 10 messages a
// second: one send per publisher every 40 s), a common phase would make
// the offered load one burst of 400 messages every 40 s, and a window
// shorter than the interval would hold none. Saturating publishers
// (rate 0) have no schedule.
func (r *run) phaseOf(p *pubState) int64 {
	c := r.cfg.Case
	if c.Rate <= 0 || len(r.pubs) < 2 {
		return 0
	}
	interval := float64(time.Second) / c.Rate
	return -int64(interval * float64(p.id) / float64(len(r.pubs)))
}
