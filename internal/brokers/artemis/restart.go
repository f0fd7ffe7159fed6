package artemis

import (
	"context"
	"errors"
	"os"

	"pslab/internal/broker"
)

// Exited implements Watched.
func (a *Artemis) Exited() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run == nil {
		return nil
	}
	return broker.ExitedOnItsOwn("artemis", a.run.cmd, a.run.exited, a.RunLog())
}

// Kill implements Restartable: SIGKILL to the broker's process group (the
// JVM dies as in a crash, nothing is shut down cleanly). The instance and
// its journal stay; Restart starts the same instance again.
func (a *Artemis) Kill() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run == nil {
		return errors.New("artemis is not running")
	}
	err := broker.KillProcessGroup(a.run.cmd.Process.Pid, a.run.exited)
	a.run = nil
	os.Remove(a.pidFile())
	return err
}

// Restart implements Restartable: it starts the instance again on the host
// of the last Start, with the same ports and credentials. Artemis loads its
// journal: durable subscription queues and the persistent messages in them
// survive; temporary (non-durable) subscription queues and non-persistent
// messages do not.
func (a *Artemis) Restart(ctx context.Context) error {
	a.mu.Lock()
	h := a.host
	running := a.run != nil
	a.mu.Unlock()
	if running {
		return errors.New("artemis: restart while running (Kill first)")
	}
	if h == nil {
		return errors.New("artemis: restart of a broker that was never started")
	}
	_, err := a.Start(ctx, h)
	return err
}
