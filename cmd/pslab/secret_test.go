package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/lab"
	"pslab/internal/results"
)

// natsJetStream runs an in-process nats-server with JetStream on
// loopback that admits user u with password.
func natsJetStream(t *testing.T, password string) string {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir(),
		Username: "u", Password: password}
	s, err := server.NewServer(opts)
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second))
	t.Cleanup(s.Shutdown)
	return s.Addr().String()
}

// wroteSecret lists the files under dirs that contain secret, and checks
// the stated modes of what a run writes: files 0644 (0600 where they hold
// credentials), directories 0755, less the umask.
func wroteSecret(t *testing.T, secret string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(data), secret) {
				found = append(found, path)
			}
			return nil
		})
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	}
	return found
}

// TestNoSecretOnDisk runs a case against a broker given with --url with a
// password in it, and greps everything the run
// wrote (the bundle, run.json, parts.log, pslab's cache) and printed for
// the secret: run.json and parts.log keep the URL redacted. Before,
// run.json held the URL with its password in plain text (mode 0644), and
// parts.log the command line as typed. A resume then asks for the URL
// again (the password is not kept), and takes it.
func TestNoSecretOnDisk(t *testing.T) {
	for name, mk := range map[string]func(secret string) string{
		"password": func(secret string) string { return "nats://u:" + secret + "@" + natsJetStream(t, secret) },
	} {
		t.Run(name, func(t *testing.T) {
			secret := "S3cr3t" + strings.ToUpper(name) + "x9"
			u := mk(secret)
			dir := t.TempDir()
			cache := filepath.Join(dir, "cache")
			t.Setenv("PSLAB_CACHE", cache)
			suite := filepath.Join(dir, "secret.yaml")
			require.NoError(t, os.WriteFile(suite, []byte(fakeSuite), 0o644)) // run on nats (--broker)
			out := filepath.Join(dir, "out")
			// parts.log keeps the command line (os.Args): the test's is
			// the one a user types.
			runArgs := []string{suite, "--broker", "nats", "--url", "nats=" + u, "--out", out, "--lab", "secr"}
			defer func(a []string) { os.Args = a }(os.Args)
			os.Args = append([]string{"pslab", "run"}, runArgs...)
			log, err := runCmd(runArgs...)
			require.NoError(t, err, log)
			recs, err := results.Read(out)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			assert.Empty(t, recs[0].Error)
			assert.NotContains(t, log, secret, "printed")
			assert.Empty(t, wroteSecret(t, secret, out, cache), "files holding the secret")
			data, err := os.ReadFile(filepath.Join(out, lab.RunInfoFile))
			require.NoError(t, err)
			assert.Contains(t, string(data), "--url=nats=redacted:", "run.json says the URL was redacted")
			for _, f := range []string{lab.RunInfoFile, results.RecordsFile} {
				st, err := os.Stat(filepath.Join(out, f))
				require.NoError(t, err)
				assert.Zero(t, st.Mode().Perm()&0o133, "%s: mode %v", f, st.Mode().Perm())
			}

			// Resume: the URL must be given again, and matches the run's.
			_, err = runCmd("--resume", out, "--lab", "secr")
			require.Error(t, err)
			assert.True(t, isBadInput(err))
			assert.Contains(t, err.Error(), "--url nats=")
			other := strings.Replace(u, "127.0.0.1", "localhost", 1)
			_, err = runCmd("--resume", out, "--lab", "secr", "--url", "nats="+other)
			require.Error(t, err, "another broker than the run's")
			assert.True(t, isBadInput(err))
			t.Setenv("PSLAB_TEST_URL", u)
			os.Args = []string{"pslab", "run", "--resume", out, "--lab", "secr", "--url=nats=" + u} // as typed, the secret in it
			log, err = runCmd("--resume", out, "--lab", "secr", "--url", "nats=env:PSLAB_TEST_URL")
			require.NoError(t, err, log)
			assert.Contains(t, log, "every repetition finished")
			assert.Empty(t, wroteSecret(t, secret, out, cache), "files holding the secret after the resume")
			assert.NotContains(t, fmt.Sprint(log), secret)
		})
	}
}
