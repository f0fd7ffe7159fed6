package nats_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/broker"
	"pslab/internal/brokers"
	"pslab/internal/brokers/nats"
	"pslab/internal/driver"
	"pslab/internal/driver/drivertest"
	"pslab/internal/scenario"
	"pslab/internal/testbroker"
)

// TestDescriptorCarriesWhatNATSIs: what the rest of pslab reads from the
// NATS descriptor instead of naming NATS: its limit, container, version,
// capability table and report caveat.
func TestDescriptorCarriesWhatNATSIs(t *testing.T) {
	d, ok := brokers.Lookup(nats.Name)
	require.True(t, ok, "registered by the package's init")
	assert.Equal(t, nats.MaxConn, d.MaxConns)
	assert.Contains(t, d.Version, server.VERSION)
	require.NotNil(t, d.Container)
	assert.True(t, d.Container.OwnsNamespace, "docker-compose.yml: artemis joins the nats service's namespace")
	assert.Equal(t, "nats", d.Container.Scheme)
	assert.Contains(t, d.Schemes, d.Container.Scheme)

	var out bytes.Buffer
	require.NoError(t, d.Install(context.Background(), &out, nil))
	assert.Contains(t, out.String(), "nothing to install")
	b, err := d.NewBroker(context.Background(), "x", nil)
	require.NoError(t, err)
	assert.IsType(t, &nats.Server{}, b)

	f := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	f.Filter, f.Values, f.Matching = scenario.FilterProperty, 2, 1
	err = d.Supports(f)
	assert.ErrorIs(t, err, driver.ErrUnsupported)
	assert.ErrorContains(t, err, "subject only")
	f.Filter = scenario.FilterSubject
	assert.NoError(t, d.Supports(f))

	// The caveat concerns exactly the records whose mechanism the driver
	// wrote for a selector case.
	require.Len(t, d.Caveats, 1)
	c := d.Caveats[0]
	sel := drivertest.Factors(scenario.NonDurable, scenario.NonPersistent)
	sel.Selector = true
	drv := &nats.Driver{}
	assert.True(t, c.Applies(nats.Name, drv.Mechanism(sel)), drv.Mechanism(sel))
	assert.False(t, c.Applies(nats.Name, drv.Mechanism(drivertest.Factors(scenario.NonDurable, scenario.NonPersistent))))
	assert.False(t, c.Applies("artemis", drv.Mechanism(sel)))
}

// TestProbeAndLoginAgainstTheServer: the probe reads auth_required from
// pslab's server; the login takes the right password and refuses a wrong
// one, through the registry (by URL scheme).
func TestProbeAndLoginAgainstTheServer(t *testing.T) {
	ep := testbroker.NATS(t)
	u, err := url.Parse(ep.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(ep.User, ep.Password)
	ext, err := broker.NewExternal(nats.Name, u.String())
	require.NoError(t, err)
	open, detail, err := brokers.Default.OpenAccess(context.Background(), ext)
	require.NoError(t, err)
	assert.False(t, open, detail)
	assert.NoError(t, brokers.Default.CheckLogin(context.Background(), ext))
	u.User = url.UserPassword(ep.User, "wrong")
	bad, err := broker.NewExternal(nats.Name, u.String())
	require.NoError(t, err)
	assert.ErrorContains(t, brokers.Default.CheckLogin(context.Background(), bad), "login")
}

// TestLeftoversRemoveDeadRunsStores: the stores of runs that are gone go,
// the store of a live run stays.
func TestLeftoversRemoveDeadRunsStores(t *testing.T) {
	cache := t.TempDir()
	parent := nats.StoreParent(cache)
	dead := filepath.Join(parent, "store-dead")
	mine := filepath.Join(parent, "store-mine")
	require.NoError(t, os.MkdirAll(dead, 0o700))
	require.NoError(t, os.MkdirAll(mine, 0o700))
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	require.NoError(t, os.WriteFile(filepath.Join(dead, nats.StoreOwnerFile), []byte(strconv.Itoa(gone.Process.Pid)), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(mine, nats.StoreOwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600))
	d, _ := brokers.Lookup(nats.Name)
	removed, err := d.Leftovers(brokers.LeftoverOptions{CacheDir: cache})
	require.NoError(t, err)
	assert.NoDirExists(t, dead)
	assert.DirExists(t, mine)
	require.Len(t, removed, 1)
	assert.True(t, strings.Contains(removed[0], dead), removed[0])
}
