package broker

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckLoginFindsAWrongPassword: the pre-run check of --url logs in
// (before, it only dialled, and a wrong password failed the first case).
func TestCheckLoginFindsAWrongPassword(t *testing.T) {
	n := NewNATS(NATSConfig{StoreDir: t.TempDir()})
	ep, err := n.Start(context.Background(), LoopbackHost{})
	require.NoError(t, err)
	defer n.Stop(context.Background())
	u, err := url.Parse(ep.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(ep.User, ep.Password)
	good, err := NewExternal("nats", u.String())
	require.NoError(t, err)
	assert.NoError(t, good.CheckLogin(context.Background()))
	u.User = url.UserPassword(ep.User, "wrong-"+ep.Password)
	bad, err := NewExternal("nats", u.String())
	require.NoError(t, err)
	err = bad.CheckLogin(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "login")
	u.User = nil
	none, err := NewExternal("nats", u.String())
	require.NoError(t, err)
	assert.Error(t, none.CheckLogin(context.Background()), "no credentials where some are required")
}
