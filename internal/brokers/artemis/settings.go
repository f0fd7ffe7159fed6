package artemis

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The instance's acceptors. Host, ports and socket buffer sizes are
// ${pslab.*} placeholders that Start fills with -D system properties (the
// defaults after ':' apply when bin/artemis is run by hand), so one
// instance can serve on loopback or inside the lab's broker namespace.
//   - stomp: STOMP only, what pslab measures.
//   - artemis: CORE only, for `artemis perf client` against the same broker.
//   - mqtt: MQTT only, for artemis-mqtt (mqtt.go); its port is 0, any
//     free one, unless artemis-mqtt asks for its own.
const acceptorsTemplate = `<acceptors>
         <!-- written by pslab: STOMP for the measurements, CORE for "artemis perf client", MQTT for artemis-mqtt -->
         <acceptor name="stomp">tcp://${pslab.host:127.0.0.1}:${pslab.stomp.port:%[1]d}?protocols=STOMP;tcpSendBufferSize=${pslab.socket.buffer:%[3]d};tcpReceiveBufferSize=${pslab.socket.buffer:%[3]d};useEpoll=true</acceptor>
         <acceptor name="artemis">tcp://${pslab.host:127.0.0.1}:${pslab.core.port:%[2]d}?protocols=CORE;tcpSendBufferSize=${pslab.socket.buffer:%[3]d};tcpReceiveBufferSize=${pslab.socket.buffer:%[3]d};useEpoll=true</acceptor>
         <acceptor name="mqtt">tcp://${pslab.host:127.0.0.1}:${pslab.mqtt.port:0}?protocols=MQTT;tcpSendBufferSize=${pslab.socket.buffer:%[3]d};tcpReceiveBufferSize=${pslab.socket.buffer:%[3]d};useEpoll=true</acceptor>
      </acceptors>`

var (
	acceptorsRE = regexp.MustCompile(`(?s)<acceptors>.*?</acceptors>`)
	commentRE   = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// writeAcceptors replaces the acceptors `artemis create` wrote.
func (a *Artemis) writeAcceptors(brokerXML string) error {
	b, err := os.ReadFile(brokerXML)
	if err != nil {
		return err
	}
	if n := len(acceptorsRE.FindAll(b, -1)); n != 1 {
		return fmt.Errorf("%s: found %d <acceptors> sections, want 1", brokerXML, n)
	}
	repl := fmt.Sprintf(acceptorsTemplate, a.cfg.Port, a.cfg.CorePort, a.cfg.SocketBufferBytes)
	out := acceptorsRE.ReplaceAllLiteral(b, []byte(repl))
	return os.WriteFile(brokerXML, out, 0o644)
}

// upgradeAcceptors writes the acceptors again into an instance made
// before its broker.xml had all of them (the MQTT acceptor came later).
func (a *Artemis) upgradeAcceptors() error {
	p := filepath.Join(a.InstanceDir(), "etc", "broker.xml")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if strings.Contains(string(b), `<acceptor name="mqtt">`) {
		return nil
	}
	return a.writeAcceptors(p)
}

// acceptorURL is the effective acceptor URL for ip and port.
func (a *Artemis) acceptorURL(ip string, port int, protocol string) string {
	return fmt.Sprintf("tcp://%s:%d?protocols=%s;tcpSendBufferSize=%d;tcpReceiveBufferSize=%d",
		ip, port, protocol, a.cfg.SocketBufferBytes, a.cfg.SocketBufferBytes)
}

// Settings implements Broker: what a result record needs to know about how
// this broker ran.
func (a *Artemis) Settings() map[string]string {
	a.mu.Lock()
	ip := "127.0.0.1"
	if a.run != nil {
		ip = a.run.ip
	}
	a.mu.Unlock()
	s := map[string]string{
		"version":             a.Version(),
		"protocol":            "STOMP 1.2",
		"heap_mb":             strconv.Itoa(a.cfg.HeapMB),
		"socket_buffer_bytes": strconv.Itoa(a.cfg.SocketBufferBytes),
		"stomp_acceptor":      a.acceptorURL(ip, a.cfg.Port, "STOMP"),
		"core_acceptor":       a.acceptorURL(ip, a.cfg.CorePort, "CORE"),
		"mqtt_acceptor":       a.acceptorURL(ip, a.cfg.MQTTPort, "MQTT"),
		"instance":            a.InstanceDir(),
	}
	a.tlsSettings(s, ip)
	// Linux caps SO_SNDBUF/SO_RCVBUF at these; the effective buffer is the
	// smaller of the two.
	for _, k := range []string{"rmem_max", "wmem_max"} {
		if b, err := os.ReadFile("/proc/sys/net/core/" + k); err == nil {
			s["kernel_"+k] = strings.TrimSpace(string(b))
		}
	}
	if b, err := os.ReadFile(filepath.Join(a.InstanceDir(), "etc", "broker.xml")); err == nil {
		b = commentRE.ReplaceAll(b, nil)
		for _, k := range []string{"journal-type", "journal-datasync", "persistence-enabled", "journal-buffer-timeout"} {
			if m := regexp.MustCompile(`<` + k + `>([^<]*)</` + k + `>`).FindSubmatch(b); m != nil {
				s[strings.ReplaceAll(k, "-", "_")] = string(m[1])
			}
		}
	}
	return s
}
