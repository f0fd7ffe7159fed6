package artemis

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ArtemisSyncTimeoutNs is the journal buffer timeout and page sync
// timeout every pslab Artemis instance runs with (broker.xml's
// journal-buffer-timeout and page-sync-timeout, in ns): how long the
// journal (and paging) gathers writes before it syncs them. `artemis
// create` tunes both to the disk it finds when the instance is made, so
// instances made at different times or in different labs of one run had
// 156-964 µs (issue 31): as many configurations as instances. pslab pins
// them at every start to Artemis's own default for the AIO journal,
// 500 µs (2000 syncs a second), within what the tuning measured here.
const ArtemisSyncTimeoutNs = 500000

var syncTimeoutRE = regexp.MustCompile(`<(journal-buffer-timeout|page-sync-timeout)>[^<]*</(journal-buffer-timeout|page-sync-timeout)>`)

// pinSyncTimeouts sets the journal buffer and page sync timeouts of
// broker.xml to ArtemisSyncTimeoutNs (rewriting the file only when it
// differs). A broker.xml without the elements gets none: Artemis's
// defaults then apply, and Settings says so by their absence.
func pinSyncTimeouts(brokerXML string) error {
	b, err := os.ReadFile(brokerXML)
	if err != nil {
		return err
	}
	out := syncTimeoutRE.ReplaceAllFunc(b, func(m []byte) []byte {
		name := syncTimeoutRE.FindSubmatch(m)[1]
		return []byte("<" + string(name) + ">" + strconv.Itoa(ArtemisSyncTimeoutNs) + "</" + string(name) + ">")
	})
	if string(out) == string(b) {
		return nil
	}
	return os.WriteFile(brokerXML, out, 0o644)
}

// artemisConfigFiles are the instance files that configure the broker.
var artemisConfigFiles = []string{"etc/broker.xml", "etc/artemis.profile", "etc/bootstrap.xml"}

// EffectiveConfig implements Configured: the settings that do not name
// the instance or its address, and the instance's configuration files
// without their XML comments, with its directory and the distribution's
// written as ${instance} and ${home} (the labs of one run each have an
// instance of their own).
func (a *Artemis) EffectiveConfig() (map[string]string, map[string][]byte, error) {
	settings := a.Settings()
	for _, k := range []string{"instance", "stomp_acceptor", "core_acceptor", "mqtt_acceptor", "stomp_tls_acceptor"} {
		delete(settings, k)
	}
	if a.servesTLS() { // what the acceptor's address leaves: TLS is served
		settings["tls"] = "STOMP acceptor sslEnabled, keyStoreType=PEM, the lab's ECDSA P-256 certificate"
	}
	files := map[string][]byte{}
	for _, rel := range artemisConfigFiles {
		b, err := os.ReadFile(filepath.Join(a.InstanceDir(), rel))
		if err != nil {
			return nil, nil, fmt.Errorf("artemis configuration: %w", err)
		}
		if strings.HasSuffix(rel, ".xml") {
			// Comments configure nothing, and `artemis create` writes
			// what its tuning measured into one ("4.17 writes per
			// millisecond"), different in every instance.
			b = commentRE.ReplaceAll(b, nil)
		}
		s := strings.ReplaceAll(string(b), a.InstanceDir(), "${instance}")
		files[rel] = []byte(strings.ReplaceAll(s, a.HomeDir(), "${home}"))
	}
	return settings, files, nil
}
