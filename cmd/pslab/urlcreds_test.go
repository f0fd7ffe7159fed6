package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
)

// TestURLCredentialsOffTheCommandLine: --url takes the URL from an
// environment variable or a private file, so ps does not show the password.
func TestURLCredentialsOffTheCommandLine(t *testing.T) {
	t.Setenv("PSLAB_TEST_URL", "nats://u:secret@127.0.0.1:4222")
	urls, err := parseURLs([]string{"nats=env:PSLAB_TEST_URL"})
	require.NoError(t, err)
	assert.Equal(t, "nats://u:secret@127.0.0.1:4222", urls["nats"])
	_, err = parseURLs([]string{"nats=env:PSLAB_TEST_UNSET_URL"})
	assert.ErrorContains(t, err, "PSLAB_TEST_UNSET_URL is not set")

	file := filepath.Join(t.TempDir(), "nats.url")
	require.NoError(t, os.WriteFile(file, []byte("stomp://u:secret@127.0.0.1:61613\n"), 0o600))
	urls, err = parseURLs([]string{"artemis=file:" + file})
	require.NoError(t, err)
	assert.Equal(t, "stomp://u:secret@127.0.0.1:61613", urls["artemis"])
	require.NoError(t, os.Chmod(file, 0o644))
	_, err = parseURLs([]string{"artemis=file:" + file})
	assert.ErrorContains(t, err, "readable by others")

	assert.NotContains(t, broker.Redact("nats://u:secret@127.0.0.1:4222"), "secret")
}

// TestNetemTakesLabWithPrefixAsDeprecatedAlias: one name for the lab in
// run and netem (--lab); netem's old --prefix still works.
func TestNetemTakesLabWithPrefixAsDeprecatedAlias(t *testing.T) {
	show, _, err := rootCmd.Find([]string{"netem", "show"})
	require.NoError(t, err)
	fs := show.InheritedFlags()
	require.NotNil(t, fs.Lookup("lab"), "netem has --lab")
	require.NoError(t, fs.Set("prefix", "oldname"))
	assert.Equal(t, "oldname", fs.Lookup("lab").Value.String(), "--prefix sets the lab")
	assert.NotEmpty(t, fs.Lookup("prefix").Deprecated)
	require.NoError(t, fs.Set("lab", "pslab"))
}
