// Package mqtt is pslab's MQTT client and driver (driver.Driver), shared
// by the MQTT brokers (internal/brokers/mosquitto and the MQTT listeners
// of NATS and Artemis); a protocol, not a broker, so it lives beside
// internal/driver, not under internal/brokers: MQTT 3.1.1, and MQTT 5 where a broker speaks it.
// What differs between brokers (their persistence, what they keep for an
// absent session, QoS 2, what they hold after a case, per-case set-up) is
// a Profile each broker package gives.
//
// The client is pslab's own, over the Eclipse Paho packet codecs for
// connection set-up (paho.mqtt.golang for 3.1.1, paho.golang for 5) and
// its own encoding of the packets every message costs. Neither Paho
// client can be driven the way a measurement needs (the same reasons the
// STOMP driver has its own connection): pslab must count the sends a
// lost connection leaves in doubt and those it sends again, reset a
// socket at the end of a case, hold PUBACKs back for DUPS_OK and bound
// them by the broker's in-flight limit, keep a window of unconfirmed
// sends per publisher, and spend as little client CPU per message as a
// load tool does (docs/mqtt.md).
package mqtt

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pslab/internal/driver"
	"pslab/internal/record"
	"pslab/internal/scenario"
)

// Profile is one MQTT broker as the driver sees it.
type Profile struct {
	// Name is the broker's name in records, e.g. "mosquitto".
	Name string
	// Product names the broker and its version, e.g. "Mosquitto 2.0.11".
	Product string
	// Version is the protocol spoken (V311 or V5).
	Version Version
	// QoS2Refusal, when not empty, is why the broker cannot run
	// exactly-once (QoS 2) cases.
	QoS2Refusal string
	// Persistence says how the broker keeps QoS 1 and 2 messages, for
	// the mechanism ("its persistence: ...").
	Persistence string
	// QoS0WhileAway says what the broker does with QoS 0 messages for a
	// persistent session whose client is away (MQTT leaves it open).
	QoS0WhileAway string
	// KeepsQoS0WhileAway tells whether it keeps them (the audit's
	// promise for a durable non-persistent subscription).
	KeepsQoS0WhileAway bool
	// SurvivesKill tells whether what the broker holds for QoS 1 and 2
	// (messages, sessions, the QoS 2 state) survives a kill of its process
	// (a journal or a store written as it goes), for the audit of a broker
	// restart; KillNote says why not, when not.
	SurvivesKill bool
	KillNote     string
	// InflightLimit is how many QoS 1/2 deliveries the broker sends a
	// subscriber unacknowledged (0: no limit); lazy acknowledgement
	// flushes at half of it, or the broker would wait for PUBACKs the
	// client holds back. InflightSetting names the setting.
	InflightLimit   int
	InflightSetting string
	// Redelivery says when the broker sends a delivery again within a
	// connection (MQTT 5 forbids it; some 3.1.1 brokers do after a
	// timeout); "" to say nothing.
	Redelivery string
	// Unordered, when not empty, says how the broker was measured to
	// deliver messages out of their publish order (MQTT 3.1.1
	// 4.6 asks for an ordered topic by default); "" where it was not.
	// Reordering is counted in every record either way; this says it is
	// the broker's, and the every-combination test then does not fail on
	// it.
	Unordered string
	// PingOvertakes, when not empty, says why the broker's PINGRESP does
	// not confirm the PUBLISHes sent before its PINGREQ (it answers a
	// PINGREQ ahead of PUBLISHes it has queued). A QoS 0 publisher then
	// confirms its sends with the PUBACK of a QoS 1 PUBLISH without
	// payload to <root>/b, a topic no case subscribes to, which the broker
	// handles in order with the PUBLISHes before it.
	PingOvertakes string
	// MaxPayload is the largest message the broker takes (0: MQTT's own
	// limit).
	MaxPayload int
	// Note is appended to the mechanism.
	Note string
	// Admin is the broker-specific part of a case (nil: none; then
	// Held cannot say what the broker holds).
	Admin Admin
}

// Admin is what differs between MQTT brokers in a case's life.
type Admin interface {
	// Prepare readies the broker for the case before any client
	// connects (e.g. Mosquitto's persistence per case).
	Prepare(ctx context.Context, c driver.CaseSpec) error
	// Held says what the broker still holds for the case when its drain
	// ends; st is what the case's clients counted.
	Held(ctx context.Context, c driver.CaseSpec, st CaseState) (driver.Held, error)
	// Purge removes what the broker keeps of names starting with prefix
	// beyond the sessions the driver ends itself (Driver.Purge).
	Purge(ctx context.Context, prefix string) error
	// Close releases the admin's connections.
	Close() error
}

// CaseState is what the driver counted of a case's clients, for Admin.Held.
type CaseState struct {
	// Parsed counts the PUBLISH packets the case's subscribers read, on
	// every connection (a broker that counts what it sent compares).
	Parsed int64
	// Subscribers is the case's subscriber count; MaxFanout the most
	// subscribers one message is due to.
	Subscribers, MaxFanout int
	// QoS of the case.
	QoS byte
}

// Driver is the MQTT driver of one broker.
type Driver struct {
	p    Profile
	ep   driver.Endpoint
	addr string

	mu       sync.Mutex
	sessions map[string]bool   // persistent sessions made through this driver, by client id
	cases    map[string]*cstat // by case prefix
}

// cstat is a case's counts as the driver sees them.
type cstat struct {
	parsed atomic.Int64 // PUBLISH packets the case's subscribers read
}

// Addr turns an endpoint URL (mqtt://host:port, tcp://host:port) into
// host:port.
func Addr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("bad MQTT endpoint URL %q: %v", raw, err)
	}
	if (u.Scheme != "mqtt" && u.Scheme != "tcp") || u.Host == "" {
		return "", fmt.Errorf("bad MQTT endpoint URL %q: want mqtt://host:port", raw)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "1883"), nil
	}
	return u.Host, nil
}

// New opens the driver of broker p at ep. It connects to nothing until
// used.
func New(p Profile, ep driver.Endpoint) (*Driver, error) {
	addr, err := Addr(ep.URL)
	if err != nil {
		return nil, err
	}
	if p.Version != V311 && p.Version != V5 {
		return nil, fmt.Errorf("%s: unknown MQTT version %d", p.Name, p.Version)
	}
	return &Driver{p: p, ep: ep, addr: addr, sessions: map[string]bool{}, cases: map[string]*cstat{}}, nil
}

// Profile is the driver's broker profile.
func (d *Driver) Profile() Profile { return d.p }

// Unordered is the broker's measured reordering (Profile.Unordered).
func (d *Driver) Unordered() string { return d.p.Unordered }

// Name implements driver.Driver.
func (d *Driver) Name() string { return d.p.Name }

// Supports implements driver.Driver.
func (d *Driver) Supports(f scenario.Factors) error { return supports(d.p, f) }

// Supports tells, before any broker runs, whether p can express f.
func (p Profile) Supports(f scenario.Factors) error { return supports(p, f) }

// Mechanism implements driver.Driver.
func (d *Driver) Mechanism(f scenario.Factors) string {
	m := mechanism(d.p, f)
	if d.ep.StallTolerance > 0 {
		m += fmt.Sprintf("; keep-alive %s, a connection that reads nothing for %s with a PINGREQ unanswered is dropped and dialled again",
			keepAliveFor(d.ep), stallFor(d.ep))
	}
	return m
}

// Promises implements driver.Promiser: MQTT's promises by QoS, and the
// broker's persistence for a restart.
func (d *Driver) Promises(f scenario.Factors) *record.Promises { return promises(d.p, f) }

func promises(p Profile, f scenario.Factors) *record.Promises {
	switch QoS(f) {
	case 0:
		return &record.Promises{Basis: "MQTT QoS 0 (at most once)", NoDuplicates: true,
			Why: "a QoS 0 message is sent once and never acknowledged: one on its way when a connection ends is gone"}
	case 2:
		return &record.Promises{Basis: "MQTT QoS 2 (exactly once)", KeepsWhileAway: true, SurvivesRestart: p.SurvivesKill,
			NoDuplicates: true, Why: p.KillNote}
	}
	return &record.Promises{Basis: "MQTT QoS 1 (at least once)", KeepsWhileAway: true, SurvivesRestart: p.SurvivesKill, Why: p.KillNote}
}

// FilterMechanism implements driver.FilterMechanism.
func (d *Driver) FilterMechanism(f scenario.Factors) string { return filterMechanism(f) }

// Prepare implements driver.Driver.
func (d *Driver) Prepare(ctx context.Context, c driver.CaseSpec) error {
	if err := d.Supports(c.Factors); err != nil {
		return err
	}
	d.mu.Lock()
	d.cases[c.Prefix] = &cstat{}
	d.mu.Unlock()
	if d.p.Admin != nil {
		return d.p.Admin.Prepare(ctx, c)
	}
	return nil
}

// Held implements driver.HeldReporter through the broker's Admin.
func (d *Driver) Held(ctx context.Context, c driver.CaseSpec) (driver.Held, error) {
	if d.p.Admin == nil {
		return driver.Held{}, fmt.Errorf("%s: pslab cannot ask this broker what it holds", d.p.Name)
	}
	st := CaseState{Subscribers: c.Factors.Subscribers, MaxFanout: maxFanout(c.Factors), QoS: QoS(c.Factors)}
	d.mu.Lock()
	cs := d.cases[c.Prefix]
	d.mu.Unlock()
	if cs != nil {
		st.Parsed = cs.parsed.Load()
	}
	return d.p.Admin.Held(ctx, c, st)
}

// maxFanout is the most subscribers one message of f is due to: the
// subscribers of the most subscribed topic.
func maxFanout(f scenario.Factors) int {
	n := 0
	for t := 0; t < f.Topics; t++ {
		n = max(n, f.SubscribersOfTopic(t))
	}
	return n
}

// caseStat is the counts of the case with prefix, made when missing (a
// client of a case the driver did not prepare).
func (d *Driver) caseStat(prefix string) *cstat {
	d.mu.Lock()
	defer d.mu.Unlock()
	cs := d.cases[prefix]
	if cs == nil {
		cs = &cstat{}
		d.cases[prefix] = cs
	}
	return cs
}

// noteSession remembers a persistent session, for Purge.
func (d *Driver) noteSession(id string) {
	d.mu.Lock()
	d.sessions[id] = true
	d.mu.Unlock()
}

// Purge implements driver.Driver: it ends every persistent session this
// driver made whose client id starts with prefix (a CONNECT with a clean
// session under its id, from beside the broker), then asks the broker's
// Admin to remove the rest.
func (d *Driver) Purge(ctx context.Context, prefix string) error {
	d.mu.Lock()
	var ids []string
	for id := range d.sessions {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	for p := range d.cases {
		if strings.HasPrefix(p, prefix) {
			delete(d.cases, p)
		}
	}
	d.mu.Unlock()
	sort.Strings(ids)
	if err := d.endSessions(ctx, ids); err != nil {
		return err
	}
	if d.p.Admin != nil {
		return d.p.Admin.Purge(ctx, prefix)
	}
	return nil
}

// endSessions ends the persistent sessions of ids, 32 at a time.
func (d *Driver) endSessions(ctx context.Context, ids []string) error {
	ep := d.ep
	if ep.AdminDialer != nil {
		ep.Dialer = ep.AdminDialer
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := EndSession(ctx, ep, d.addr, d.p.Version, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			d.mu.Lock()
			delete(d.sessions, id)
			d.mu.Unlock()
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%s: end %d of %d sessions: %s", d.p.Name, len(errs), len(ids), errs[0])
	}
	return nil
}

// EndSession ends the persistent session of client id at addr: a CONNECT
// with a clean session (MQTT 5: clean start, no expiry) discards it, and
// the DISCONNECT that follows leaves nothing behind.
func EndSession(ctx context.Context, ep driver.Endpoint, addr string, v Version, id string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dial(cctx, ep, addr, connectOpts{v: v, clientID: id, clean: true}, func(*conn, packet) error { return nil }, nil)
	if err != nil {
		return err
	}
	return c.CloseBy(time.Now().Add(5 * time.Second))
}

// Check logs in to the MQTT broker at ep and disconnects (a wrong user or
// password gives an error wrapping ErrLoginRefused).
func Check(ctx context.Context, ep driver.Endpoint, v Version) error {
	addr, err := Addr(ep.URL)
	if err != nil {
		return err
	}
	c, err := dial(ctx, ep, addr, connectOpts{v: v, clientID: "pslab-check-" + randomID(), clean: true},
		func(*conn, packet) error { return nil }, nil)
	if err != nil {
		return err
	}
	return c.CloseBy(time.Now().Add(5 * time.Second))
}

// Close implements driver.Driver.
func (d *Driver) Close() error {
	if d.p.Admin != nil {
		return d.p.Admin.Close()
	}
	return nil
}

// keepAliveFor is the keep-alive a client of ep asks for: the broker
// drops a client that sends nothing for 1.5 times it, so it is two thirds
// of the stall tolerance on a shaped link (TCP's back-off may hold a
// PINGREQ that long), else 60 s.
func keepAliveFor(ep driver.Endpoint) time.Duration {
	if ep.StallTolerance > 0 {
		return (ep.StallTolerance * 2 / 3).Truncate(time.Second)
	}
	return 60 * time.Second
}

// stallFor is how long a client waits, reading nothing with a PINGREQ
// unanswered, before it drops the connection and dials again.
func stallFor(ep driver.Endpoint) time.Duration {
	if ep.StallTolerance > 0 {
		return ep.StallTolerance
	}
	return 90 * time.Second
}

// connectOpts of a client of this driver.
func (d *Driver) connectOpts(id string, persistent bool) connectOpts {
	o := connectOpts{v: d.p.Version, clientID: id, clean: !persistent,
		keepAlive: keepAliveFor(d.ep), stall: stallFor(d.ep), receiveMax: 65535}
	if persistent && d.p.Version == V5 {
		o.sessionExpiry = sessionExpiry
	}
	return o
}
