package procs

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOwnerOfAChildIsItsParent(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	assert.Equal(t, os.Getpid(), Owner(cmd.Process.Pid))
	assert.True(t, Running(cmd.Process.Pid))
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.False(t, Running(cmd.Process.Pid), "reaped")
	assert.Zero(t, Owner(cmd.Process.Pid), "no such process")
}

// Process 1 of this PID namespace is an init whatever its name; this
// process is not.
func TestNamespaceInit(t *testing.T) {
	assert.True(t, namespaceInit(1))
	assert.False(t, namespaceInit(os.Getpid()))
	assert.False(t, namespaceInit(-1))
}
