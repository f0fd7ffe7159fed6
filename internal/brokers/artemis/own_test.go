package artemis

import (
	"path/filepath"
	"testing"
)

func TestOwnProcess(t *testing.T) {
	cache := t.TempDir()
	inst := filepath.Join(cache, "artemis", "instances")
	for arg, want := range map[string]struct {
		ok         bool
		lab        string
		keepOnHost bool
	}{
		"-Dartemis.instance=" + filepath.Join(inst, "lab-pk-2.44.0"):    {true, "pk", false},
		"-Dartemis.instance=" + filepath.Join(inst, "default-2.44.0"):   {true, "pslab", true},
		"-Dartemis.instance=" + filepath.Join(inst, "test-x-2.44.0"):    {true, "", true},
		"-Dartemis.instance=/elsewhere/artemis/instances/lab-pk-2.44.0": {false, "", false},
		"-Dartemis.home=" + filepath.Join(inst, "lab-pk-2.44.0"):        {false, "", false},
	} {
		own, ok := ownProcess(cache, []byte("java\x00-Xmx1g\x00"+arg+"\x00org.apache.activemq.artemis.boot.Artemis\x00"), nil)
		if ok != want.ok || own.Lab != want.lab || own.KeepOnHost != want.keepOnHost {
			t.Errorf("%s: got %+v %v, want %+v", arg, own, ok, want)
		}
	}
}
