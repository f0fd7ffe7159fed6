package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDocker stands in for docker inspect and /proc/PID/ns/net.
func fakeDocker(pids map[string]int, ns map[int]uint64) (func(string) (int, error), func(int) (uint64, error)) {
	return func(c string) (int, error) {
			if p, ok := pids[c]; ok {
				return p, nil
			}
			return 0, errors.New("no such container " + c)
		}, func(pid int) (uint64, error) {
			return ns[pid], nil
		}
}

func TestContainersResolveToOneNamespace(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"NATS_USER": "n", "NATS_PASSWORD": "p/w@1", "ARTEMIS_USER": "a", "ARTEMIS_PASSWORD": "q"}[k]
	}
	pidOf, nsOf := fakeDocker(map[string]int{"pslab-nats": 100, "my-artemis": 200}, map[int]uint64{100: 7, 200: 7})
	urls := map[string]string{}
	pid, pids, err := resolveContainers([]string{"nats", "artemis=my-artemis"}, urls, 0, env, pidOf, nsOf)
	require.NoError(t, err)
	assert.Equal(t, 100, pid, "the namespace by the nats container, which owns it in compose")
	assert.Equal(t, map[string]int{"nats": 100, "artemis": 200}, pids, "each broker's own process is sampled")
	assert.Equal(t, "nats://n:p%2Fw%401@10.77.2.2:4222?monitor=8222", urls["nats"], "credentials escaped, broker end of the link, its monitoring port")
	assert.Equal(t, "stomp://a:q@10.77.2.2:61613", urls["artemis"])
	assert.Equal(t, []string{"artemis", "nats"}, sortedKeys(pids))

	// A URL the user gave wins over the one built from the environment.
	urls = map[string]string{"nats": "nats://x:y@10.77.2.2:4333"}
	_, _, err = resolveContainers([]string{"nats"}, urls, 0, env, pidOf, nsOf)
	require.NoError(t, err)
	assert.Equal(t, "nats://x:y@10.77.2.2:4333", urls["nats"])

	// Without --container nothing changes.
	pid, pids, err = resolveContainers(nil, map[string]string{}, 42, env, pidOf, nsOf)
	require.NoError(t, err)
	assert.Equal(t, 42, pid)
	assert.Nil(t, pids)
}

func TestContainersRefusals(t *testing.T) {
	noEnv := func(string) string { return "" }
	pidOf, nsOf := fakeDocker(map[string]int{"pslab-nats": 100, "pslab-artemis": 200}, map[int]uint64{100: 7, 200: 8})
	_, _, err := resolveContainers([]string{"nats", "artemis", "rabbit=x", "nats=other"}, map[string]string{}, 5, noEnv, pidOf, nsOf)
	require.Error(t, err)
	var bad badInputError
	require.ErrorAs(t, err, &bad, "exit code 2")
	for _, want := range []string{
		"--container and --broker-pid",
		`unknown broker "rabbit"`,
		"broker nats given twice",
		"set NATS_USER and NATS_PASSWORD",
		"set ARTEMIS_USER and ARTEMIS_PASSWORD",
	} {
		assert.Contains(t, err.Error(), want)
	}

	env := func(k string) string { return "v" }
	_, _, err = resolveContainers([]string{"nats", "artemis"}, map[string]string{}, 0, env, pidOf, nsOf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "different network namespaces")

	_, _, err = resolveContainers([]string{"nats=gone"}, map[string]string{}, 0, env, pidOf, nsOf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such container gone")
}

func TestDotEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".env")
	require.NoError(t, os.WriteFile(p, []byte("# c\n\nNATS_USER=pslab\nexport NATS_PASSWORD=\"a b\"\nARTEMIS_PASSWORD='x=y'\nEMPTY=\nbroken\n"), 0o600))
	assert.Equal(t, map[string]string{"NATS_USER": "pslab", "NATS_PASSWORD": "a b", "ARTEMIS_PASSWORD": "x=y", "EMPTY": ""}, dotEnv(p))
	assert.Empty(t, dotEnv(filepath.Join(t.TempDir(), "missing")))
}
