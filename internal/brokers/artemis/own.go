package artemis

import (
	"bytes"
	"path/filepath"
	"strings"

	"pslab/internal/brokers"
)

// ownProcess recognises an Artemis JVM pslab started (Descriptor.
// OwnProcess): its command line runs an instance under cacheDir's
// instances directory (-Dartemis.instance=DIR). The default instance may
// be one `pslab broker start artemis` left on the host on purpose.
func ownProcess(cacheDir string, cmdline, _ []byte) (brokers.OwnProcess, bool) {
	instances := filepath.Dir(NewArtemis(ArtemisConfig{CacheDir: cacheDir}).InstanceDir()) + string(filepath.Separator)
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		dir, ok := strings.CutPrefix(string(arg), "-Dartemis.instance=")
		if !ok || !strings.HasPrefix(dir, instances) || strings.Contains(dir[len(instances):], "/") {
			continue
		}
		lab := instanceLab(filepath.Base(dir))
		return brokers.OwnProcess{What: "Artemis (instance " + dir + ")", Lab: lab, KeepOnHost: lab == "" || lab == "pslab"}, true
	}
	return brokers.OwnProcess{}, false
}

// instanceLab is the lab an instance directory belongs to (Instance):
// lab-<name>-<version> is lab name's, default-<version> the default lab's
// ("pslab"); "" for any other (a test's).
func instanceLab(base string) string {
	i := strings.LastIndex(base, "-")
	if i < 0 {
		return ""
	}
	switch name := base[:i]; {
	case name == Instance("pslab"):
		return "pslab"
	case strings.HasPrefix(name, "lab-"):
		return name[len("lab-"):]
	}
	return ""
}
