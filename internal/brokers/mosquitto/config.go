package mosquitto

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Settings pslab gives Mosquitto, with why (each is in every record's
// broker_settings).
const (
	// autosaveInterval: with persistence on, Mosquitto keeps everything in
	// memory and writes its whole store to mosquitto.db every this many
	// seconds (and at a clean exit); there is no journal, so a kill loses
	// what arrived since the last write. One second is the least it takes.
	autosaveInterval = 1
	// maxInflight is how many QoS 1/2 deliveries Mosquitto sends a client
	// unacknowledged (its default, 20, throttles QoS 1 below what the
	// other brokers are measured at; 1024 is nats-server's MQTT
	// max_ack_pending default). Lazy acknowledgement flushes at half.
	maxInflight = 1024
	// maxQueued bounds the QoS 1/2 messages queued per client beyond the
	// in-flight ones (default 1000: a durable subscriber away for a second
	// of a saturated case would lose the rest, counted in $SYS
	// publish/messages/dropped). A million keeps what a case can queue.
	maxQueued = 1_000_000
	// sysInterval is how often Mosquitto publishes $SYS (seconds): what it
	// holds after a case's drain is read from there.
	sysInterval = 1
)

// config is a mosquitto.conf for one start.
type config struct {
	ListenIP    string
	Port        int
	Dir         string // run directory: persistence, pid file
	Persistence bool
	User        string // the system user Mosquitto drops to when started as root; "" when not root
}

func (c config) render() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("# written by pslab for one broker start; do not edit (see docs/mqtt.md)")
	if c.User != "" {
		w("user %s", c.User)
	}
	w("pid_file %s/mosquitto.pid", c.Dir)
	w("log_dest stderr")
	w("log_type error")
	w("log_type warning")
	w("log_type notice")
	w("log_type information")
	w("connection_messages false")
	w("persistence %t", c.Persistence)
	w("persistence_location %s/", c.Dir)
	w("autosave_interval %d", autosaveInterval)
	w("autosave_on_changes false")
	w("max_inflight_messages %d", maxInflight)
	w("max_queued_messages %d", maxQueued)
	w("queue_qos0_messages true")
	w("sys_interval %d", sysInterval)
	w("set_tcp_nodelay true")
	w("max_keepalive 65535")
	w("per_listener_settings false")
	w("allow_anonymous false")
	w("password_file %s/passwd", c.Dir)
	w("listener %d %s", c.Port, c.ListenIP)
	return b.String()
}

// settings are the record's broker_settings of c.
func (c config) settings() map[string]string {
	return map[string]string{
		"listener":              c.ListenIP + ":" + strconv.Itoa(c.Port),
		"auth":                  "user/password (generated per start; password_file, PBKDF2-SHA512), allow_anonymous false",
		"persistence":           "per case: true for persistent delivery (QoS 1/2), false for non-persistent (QoS 0); set by a configuration reload (SIGHUP) before the case",
		"autosave_interval":     strconv.Itoa(autosaveInterval) + " s (the whole store written to mosquitto.db; a kill loses what arrived since)",
		"max_inflight_messages": strconv.Itoa(maxInflight),
		"max_queued_messages":   strconv.Itoa(maxQueued),
		"queue_qos0_messages":   "true (QoS 0 kept for an absent persistent session, as a JMS durable subscription keeps non-persistent messages)",
		"sys_interval":          strconv.Itoa(sysInterval) + " s ($SYS: what it holds after the drain)",
		"set_tcp_nodelay":       "true (Nagle off, as the other brokers)",
	}
}

// passwordLine is a password_file line for user: Mosquitto's PBKDF2-SHA512
// hash ("$7$<iterations>$<salt>$<hash>", what mosquitto_passwd writes).
func passwordLine(user, password string) (string, error) {
	salt := make([]byte, 12)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	const iterations = 101 // mosquitto_passwd's own
	key, err := pbkdf2.Key(sha512.New, password, salt, iterations, sha512.Size)
	if err != nil {
		return "", err
	}
	enc := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s:$7$%d$%s$%s\n", user, iterations, enc(salt), enc(key)), nil
}
