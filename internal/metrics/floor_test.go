package metrics

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMeasureFloor: the floor's parts are measured (counts and order,
// not times).
func TestMeasureFloor(t *testing.T) {
	f := MeasureFloor(50)
	assert.Equal(t, 50, f.Samples)
	assert.LessOrEqual(t, f.SleepP50, f.SleepP99)
	assert.Positive(t, f.LoopbackP50, "loopback round trips were timed")
	assert.LessOrEqual(t, f.LoopbackP50, f.LoopbackP99)
}

// TestOtherCPU: the machine's load besides this process reads as a
// share of the machine, and a cancelled context ends the look.
func TestOtherCPU(t *testing.T) {
	other, err := OtherCPU(context.Background(), 100*time.Millisecond, os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, other, 0.0)
	assert.LessOrEqual(t, other, float64(Cores())*100*1.5, "at most the machine (with tick rounding)")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = OtherCPU(ctx, time.Hour, os.Getpid())
	assert.ErrorIs(t, err, context.Canceled)
}
