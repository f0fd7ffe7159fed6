package artemis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/results"
)

const brokerXMLSample = `<configuration><core>
      <!-- Your system could perform %s writes per millisecond -->
      <journal-buffer-timeout>%s</journal-buffer-timeout>
      <page-sync-timeout>%s</page-sync-timeout>
      <paging-directory>data/paging</paging-directory>
</core></configuration>
`

// fakeInstance writes the configuration files of an Artemis instance
// named name under cache, with the given tuned timeout (also in a
// comment, as artemis create writes what it measured).
func fakeInstance(t *testing.T, cache, name, timeout string) *Artemis {
	t.Helper()
	a := NewArtemis(ArtemisConfig{CacheDir: cache, Instance: name})
	etc := filepath.Join(a.InstanceDir(), "etc")
	require.NoError(t, os.MkdirAll(etc, 0o755))
	xml := strings.ReplaceAll(brokerXMLSample, "%s", timeout)
	require.NoError(t, os.WriteFile(filepath.Join(etc, "broker.xml"), []byte(xml), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(etc, "artemis.profile"), []byte("ARTEMIS_INSTANCE='"+a.InstanceDir()+"'\nARTEMIS_HOME='"+a.HomeDir()+"'\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(etc, "bootstrap.xml"), []byte("<broker xmlns=\"x\"><server configuration=\"file:"+etc+"/broker.xml\"/></broker>\n"), 0o644))
	return a
}

func hashOf(t *testing.T, a *Artemis) string {
	t.Helper()
	s, f, err := a.EffectiveConfig()
	require.NoError(t, err)
	return results.ConfigHash(s, f)
}

// TestArtemisOneConfigurationAcrossInstances: two labs' instances whose
// only difference is their directory (and `artemis create`'s tuned sync
// timeouts, which pslab pins at every start) hash alike once pinned;
// before pinning, and with any other difference in broker.xml, they do
// not.
func TestArtemisOneConfigurationAcrossInstances(t *testing.T) {
	cache := t.TempDir()
	a := fakeInstance(t, cache, "lab-p1", "156000")
	b := fakeInstance(t, cache, "lab-p2", "964000")
	assert.NotEqual(t, hashOf(t, a), hashOf(t, b), "the tuned timeouts differ")
	for _, x := range []*Artemis{a, b} {
		xml := filepath.Join(x.InstanceDir(), "etc", "broker.xml")
		require.NoError(t, pinSyncTimeouts(xml))
		data, err := os.ReadFile(xml)
		require.NoError(t, err)
		assert.Contains(t, string(data), "<journal-buffer-timeout>500000</journal-buffer-timeout>")
		assert.Contains(t, string(data), "<page-sync-timeout>500000</page-sync-timeout>")
	}
	assert.Equal(t, hashOf(t, a), hashOf(t, b), "pinned: one configuration, whatever the directory")
	xml := filepath.Join(b.InstanceDir(), "etc", "broker.xml")
	data, err := os.ReadFile(xml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(xml, []byte(strings.Replace(string(data), "data/paging", "data/pages", 1)), 0o644))
	assert.NotEqual(t, hashOf(t, a), hashOf(t, b), "another broker.xml is another configuration")
}
