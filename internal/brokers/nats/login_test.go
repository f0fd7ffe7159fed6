package nats_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers/nats"
	"pslab/internal/testbroker"
)

// TestCheckLoginFindsAWrongPassword: the pre-run check of --url logs in
// (before, it only dialled, and a wrong password failed the first case).
func TestCheckLoginFindsAWrongPassword(t *testing.T) {
	ep := testbroker.NATS(t)
	login := nats.Descriptor().Login
	u, err := url.Parse(ep.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(ep.User, ep.Password)
	good, err := broker.NewExternal("nats", u.String())
	require.NoError(t, err)
	assert.NoError(t, good.CheckLogin(context.Background(), login))
	u.User = url.UserPassword(ep.User, "wrong-"+ep.Password)
	bad, err := broker.NewExternal("nats", u.String())
	require.NoError(t, err)
	err = bad.CheckLogin(context.Background(), login)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "login")
	u.User = nil
	none, err := broker.NewExternal("nats", u.String())
	require.NoError(t, err)
	assert.Error(t, none.CheckLogin(context.Background(), login), "no credentials where some are required")
}
