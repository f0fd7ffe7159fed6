package artemis

import (
	"context"
	"testing"

	"pslab/internal/broker"
)

func TestMain(m *testing.M) { broker.RunTests(m) }

var _ broker.Restartable = (*Artemis)(nil)

// A killed Artemis leaves no java process; Restart runs the same instance
// with the same endpoint.
func TestArtemisKillRestart(t *testing.T) {
	a := testArtemis(t)
	ctx := context.Background()
	if err := a.Restart(ctx); err == nil {
		t.Fatal("Restart before Start succeeded")
	}
	ep, err := a.Start(ctx, broker.LoopbackHost{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	pid := a.PID()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if a.PID() != 0 {
		t.Errorf("PID() = %d after Kill", a.PID())
	}
	if left := javaOf(a.InstanceDir()); len(left) > 0 {
		t.Errorf("java processes of the instance left after Kill: %v", left)
	}
	if err := a.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if p := a.PID(); p == 0 || p == pid {
		t.Errorf("PID() = %d after Restart, was %d", p, pid)
	}
	if _, err := CheckSTOMP(ctx, ep); err != nil {
		t.Errorf("login with the first endpoint after Restart: %v", err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
