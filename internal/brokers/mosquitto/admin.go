package mosquitto

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"pslab/internal/driver"
	"pslab/internal/mqtt"
)

// running are the brokers this process started, by endpoint URL, so that
// the driver opened on an endpoint finds its broker (persistence per case).
var running mqtt.Running[*Mosquitto]

func (m *Mosquitto) noteRunning() { running.Add(m.endpoint().URL, m) }

func (m *Mosquitto) forget() {
	m.mu.Lock()
	started := m.host != nil && m.conf.Port != 0
	m.mu.Unlock()
	if started {
		running.Remove(m.endpoint().URL)
	}
}

// admin is Mosquitto's part of a case (mqtt.Admin): the persistence of
// each case (a broker pslab started), and what it holds after the drain,
// from $SYS (sysTree: the broker's watch, which pslab opens when it
// starts the broker, and this admin at its first reading otherwise).
type admin struct {
	m  *Mosquitto // nil for a Mosquitto pslab did not start
	ep driver.Endpoint
	v  mqtt.Version

	mu   sync.Mutex
	sys  *sysTree              // from the first reading to Close
	base map[string]sysReading // by case prefix, read by Prepare
}

// read waits for Mosquitto's next $SYS update (every sys_interval, which
// Mosquitto counts strictly: every 2 s with 1) and returns its counters.
func (a *admin) read(ctx context.Context) (sysReading, error) {
	const wait = 3*sysInterval*time.Second + time.Second
	a.mu.Lock()
	if a.sys == nil {
		t, err := openSysTree(ctx, a.ep)
		if err != nil {
			a.mu.Unlock()
			return sysReading{}, err
		}
		a.sys = t
	}
	t := a.sys
	a.mu.Unlock()
	r, err := t.read(ctx, wait)
	if err != nil {
		return r, fmt.Errorf("mosquitto $SYS: %w", err)
	}
	return r, nil
}

// Prepare implements mqtt.Admin: persistence on for a persistent case (QoS
// 1/2), off otherwise, and the $SYS counters at the case's start.
func (a *admin) Prepare(ctx context.Context, c driver.CaseSpec) error {
	if a.m != nil {
		if err := a.m.setPersistence(ctx, mqtt.QoS(c.Factors) > 0); err != nil {
			return err
		}
	}
	// An update after the purge: what the previous case left is counted
	// in the baseline, not in this case.
	r, err := a.read(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	if a.base == nil {
		a.base = map[string]sysReading{}
	}
	a.base[c.Prefix] = r
	a.mu.Unlock()
	return nil
}

// Held implements mqtt.Admin. Mosquitto counts the distinct messages in
// its store ($SYS store/messages/count, retained ones apart): every QoS
// 1/2 message queued for a subscriber or awaiting its PUBACK, and QoS 0
// messages queued for an absent session. A message in the store is due
// to at least one subscriber and at most to all of its topic's: backlog
// is that count's change over the case times the case's largest fan-out
// (exact for one subscriber per message; an upper bound beyond). QoS 0
// messages leave the store when Mosquitto queues their packet, so for
// them what it sent ($SYS publish/messages/sent, since the case began,
// less its $SYS deliveries to pslab's own watch) less what the case's
// subscribers read is on its way (Mosquitto's packet queue, the sockets,
// the link) and counts too. The reading waits for Mosquitto's next $SYS
// update after the drain. A counter whose change is not known (see
// change) is an error, except for QoS 0's on their way and the drops,
// which Source then says are not known.
func (a *admin) Held(ctx context.Context, c driver.CaseSpec, st mqtt.CaseState) (driver.Held, error) {
	now, err := a.read(ctx)
	if err != nil {
		return driver.Held{}, err
	}
	a.mu.Lock()
	base, ok := a.base[c.Prefix]
	delete(a.base, c.Prefix)
	a.mu.Unlock()
	if !ok {
		// No reading from the case's start: all the store holds.
		base = sysReading{conn: now.conn, vals: map[string]string{sysStored: "0", sysRetained: "0"}}
	}
	dStored, err := change(base, now, sysStored, false)
	if err != nil {
		return driver.Held{}, fmt.Errorf("mosquitto $SYS: %w", err)
	}
	dRetained, err := change(base, now, sysRetained, false)
	if err != nil {
		return driver.Held{}, fmt.Errorf("mosquitto $SYS: %w", err)
	}
	stored := max(dStored-dRetained, 0)
	fan := int64(max(st.MaxFanout, 1))
	h := driver.Held{Backlog: stored * fan}
	src := fmt.Sprintf("mosquitto $SYS: %d messages in its store (retained apart)", stored)
	if fan > 1 {
		src += fmt.Sprintf(" x %d subscribers per message at most (an upper bound: a message may have reached some of them)", fan)
	}
	if st.QoS == 0 {
		if !ok {
			return h, fmt.Errorf("mosquitto $SYS: no reading from the start of case %s", c.Prefix)
		}
		if dSent, err := change(base, now, sysSent, true); err != nil {
			src += fmt.Sprintf("; QoS 0: what it sent to subscribers since the case began is not known (%v), so none is counted on its way", err)
		} else {
			sent := max(dSent-(now.sentAdmin-base.sentAdmin), 0)
			onWay := max(sent-st.Parsed, 0)
			h.Backlog += onWay
			h.InSockets, h.Queued, h.Parsed = onWay, sent, st.Parsed
			src += fmt.Sprintf("; QoS 0: %d PUBLISH sent to subscribers since the case began (publish/messages/sent, less its $SYS to pslab), %d read by them: %d on their way", sent, st.Parsed, onWay)
		}
	}
	if ok {
		switch d, err := change(base, now, sysDropped, true); {
		case err != nil:
			src += fmt.Sprintf("; the publishes Mosquitto dropped (queue limits) during the case are not known: %v", err)
		case d > 0:
			src += fmt.Sprintf("; Mosquitto dropped %d publishes (publish/messages/dropped: queue limits), lost", d)
		}
	}
	h.Source = src
	return h, nil
}

// Purge implements mqtt.Admin: a case leaves nothing on Mosquitto beyond
// its sessions (the driver ends those) and their queued messages.
func (a *admin) Purge(context.Context, string) error { return nil }

// Close implements mqtt.Admin: it lets go of the broker's $SYS watch
// (which a Mosquitto pslab started keeps until it stops).
func (a *admin) Close() error {
	a.mu.Lock()
	t := a.sys
	a.sys = nil
	a.mu.Unlock()
	if t == nil {
		return nil
	}
	return t.release()
}

// persistenceText is the mechanism's persistence of a Mosquitto pslab
// starts (started) or of one it reaches by URL.
func persistenceText(started bool) string {
	if !started {
		return "the persistence its own configuration sets (a Mosquitto pslab did not start)"
	}
	return fmt.Sprintf("Mosquitto's persistence on for the case (persistence true): it keeps every message in memory and writes its whole store to mosquitto.db every %d s (autosave_interval); there is no journal, so a kill loses what arrived since the last write",
		autosaveInterval)
}

// profile is Mosquitto's mqtt.Profile; m is the broker pslab started (nil
// for one reached by URL).
func profile(v mqtt.Version, name, version string, m *Mosquitto, ep driver.Endpoint) mqtt.Profile {
	p := mqtt.Profile{
		Name: name, Product: strings.TrimSpace("Mosquitto " + version), Version: v,
		Persistence:        persistenceText(m != nil),
		QoS0WhileAway:      "kept in memory (queue_qos0_messages true, a Mosquitto option beyond MQTT: 3.1.1 keeps only QoS 1 and 2); persistence is off for a non-persistent case, so a restart loses them",
		KeepsQoS0WhileAway: true,
		InflightLimit:      maxInflight, InflightSetting: "max_inflight_messages",
		SurvivesKill: false,
		KillNote:     fmt.Sprintf("Mosquitto writes its whole store every %d s and keeps no journal: a kill loses what arrived since, and the QoS 2 state with it", autosaveInterval),
		Redelivery:   "Mosquitto 2 sends a delivery again only when the session resumes, flagged DUP",
	}
	if m == nil {
		p.QoS0WhileAway = "as its own configuration sets (queue_qos0_messages; off by default: not kept)"
		p.KeepsQoS0WhileAway = false
		p.InflightLimit, p.InflightSetting = 20, "max_inflight_messages (20 unless its configuration says otherwise)"
	}
	if ep.URL != "" {
		p.Admin = &admin{m: m, ep: ep, v: v}
	}
	return p
}
