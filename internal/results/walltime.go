package results

import (
	"fmt"
	"io"
	"sort"
)

// WallTime is where the wall time of a broker's case runs over a network
// went, summed over its records (seconds).
type WallTime struct {
	Broker, Network string
	Runs            int
	Wall            float64 // the records' wall_s
	IdleWait        float64 // waiting for an idle link (phases.idle_wait_s)
	Purge           float64 // the purge before each case (phases.purge_s)
	Connect         float64 // connection set-up (result.connect_s)
	Window          float64 // warm-up and window as set (settings)
	Close           float64 // closing or dropping the connections (result.close_s)
	PurgeAfter      float64 // the purge after each case, outside wall_s (phases.purge_after_s)
}

// Rest is the wall time of the runs outside the named phases: the drain
// and the load engine's own steps (records written before the phases
// were timed have their idle wait and purge here too).
func (w WallTime) Rest() float64 {
	return w.Wall - w.IdleWait - w.Purge - w.Connect - w.Window - w.Close
}

// WallTimes sums where the records' wall time went, per broker and
// network, in that order.
func WallTimes(recs []Record) []WallTime {
	by := map[[2]string]*WallTime{}
	for _, r := range recs {
		k := [2]string{r.Broker, r.Network.Profile}
		w := by[k]
		if w == nil {
			w = &WallTime{Broker: r.Broker, Network: r.Network.Profile}
			by[k] = w
		}
		w.Runs++
		w.Wall += r.WallS
		w.Window += r.Settings.WarmupS + r.Settings.WindowS
		if p := r.Phases; p != nil {
			w.IdleWait += p.IdleWaitS
			w.Purge += p.PurgeS
			w.PurgeAfter += p.PurgeAfterS
		}
		if res := r.Result; res != nil {
			w.Connect += res.Connect
			w.Close += res.CloseS
		}
	}
	out := make([]WallTime, 0, len(by))
	for _, w := range by {
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Broker != out[j].Broker {
			return out[i].Broker < out[j].Broker
		}
		return out[i].Network < out[j].Network
	})
	return out
}

// WriteWallTimes writes the table of ws in Markdown and the time of the
// case runs, with the purge after each; total > 0 is the run's own wall
// time, and what the records do not explain is set-up between cases
// (link verification, broker start and stop, warm-up runs).
func WriteWallTimes(out io.Writer, ws []WallTime, total float64) {
	fmt.Fprintln(out, "| broker | network | runs | wall s | mean s/run | idle-link wait s | purge s | connect s | warm-up+window s | drain and rest s | close s | purge after s |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	var sum float64
	for _, w := range ws {
		sum += w.Wall + w.PurgeAfter
		fmt.Fprintf(out, "| %s | %s | %d | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
			w.Broker, w.Network, w.Runs, w.Wall, w.Wall/float64(w.Runs), w.IdleWait, w.Purge, w.Connect, w.Window, w.Rest(), w.Close, w.PurgeAfter)
	}
	fmt.Fprintf(out, "\ncase runs (with the purge after each): %.0f s", sum)
	if total > 0 {
		fmt.Fprintf(out, " of %.0f s wall; between runs (link verification, broker start and stop, warm-up runs): %.0f s", total, total-sum)
	}
	fmt.Fprintln(out)
}
