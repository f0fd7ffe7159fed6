package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is a broker run as a child process that listens on one TCP
// address: the part every such broker package shares (Mosquitto,
// nats-server). Each launch runs a fresh command from Command on Host, in
// a process group of its own (Stop and Kill reach whatever it starts),
// its output appended to Log, and is ready once Addr accepts TCP
// connections. Kill and Relaunch keep everything the broker package
// keeps (its directory, address, password), so a Proc is what a
// broker.Restartable needs.
type Proc struct {
	What    string           // the process in messages, e.g. "mosquitto"
	Host    Host             // where it runs
	Command func() *exec.Cmd // the command of each launch
	Log     string           // its output, appended
	Addr    string           // host:port it listens on
	Timeout time.Duration    // start-up bound; 0: 15 s

	mu      sync.Mutex    // guards cmd, exited, started
	cmd     *exec.Cmd     // nil while not running
	exited  chan struct{} // closed when cmd is reaped
	started bool          // launched since the last Stop
}

// errNotRunning is the error of Kill and Signal on a process that is not
// running.
var errNotRunning = errors.New("not running")

// Launch starts the process and waits until Addr accepts connections
// (through Host's dialer), the process exits, or ctx or Timeout ends.
// On failure the process is stopped.
func (p *Proc) Launch(ctx context.Context) error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return fmt.Errorf("%s: already running (pid %d)", p.What, p.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd := p.Command()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = p.Host.Start(cmd)
	logf.Close()
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("start %s: %w", p.What, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.started = cmd, exited, true
	p.mu.Unlock()
	go func() { _ = cmd.Wait(); close(exited) }()

	timeout := p.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := WaitTCP(wctx, p.Host.Dialer(), p.Addr, exited); err != nil {
		p.mu.Lock()
		_ = p.stopLocked(context.Background(), 10*time.Second)
		p.mu.Unlock()
		return fmt.Errorf("%s at %s not ready within %s: %w; last output: %s (log: %s)",
			p.What, p.Addr, timeout, err, TailFile(p.Log, 3), p.Log)
	}
	return nil
}

// Relaunch starts the process again after Kill (broker.Restartable's
// Restart): the same command, host and address.
func (p *Proc) Relaunch(ctx context.Context) error {
	p.mu.Lock()
	running, started := p.cmd != nil, p.started
	p.mu.Unlock()
	switch {
	case running:
		return fmt.Errorf("%s: restart while running (Kill first)", p.What)
	case !started:
		return fmt.Errorf("%s: restart of a broker that was never started (or was stopped)", p.What)
	}
	return p.Launch(ctx)
}

// PID is the running process's; 0 while not running.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited is Watched.Exited: nil while the process runs (or was stopped or
// killed on purpose), else how it ended and the end of its log.
func (p *Proc) Exited() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	return ExitedOnItsOwn(p.What, p.cmd, p.exited, p.Log)
}

// Done is closed when the running process has exited; nil while none
// runs.
func (p *Proc) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	return p.exited
}

// Signal sends sig to the running process (not its group).
func (p *Proc) Signal(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: %w", p.What, errNotRunning)
	}
	return p.cmd.Process.Signal(sig)
}

// Kill is broker.Restartable's: SIGKILL to the process group, as a crash,
// and wait for the exit. Relaunch starts it again.
func (p *Proc) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: %w", p.What, errNotRunning)
	}
	err := KillProcessGroup(p.cmd.Process.Pid, p.exited)
	p.cmd = nil
	return err
}

// Stop ends the process: SIGTERM to its group, SIGKILL after grace or
// when ctx ends. Nothing to do when it is not running; Relaunch refuses
// afterwards.
func (p *Proc) Stop(ctx context.Context, grace time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = false
	return p.stopLocked(ctx, grace)
}

func (p *Proc) stopLocked(ctx context.Context, grace time.Duration) error {
	if p.cmd == nil {
		return nil
	}
	err := StopProcessGroup(ctx, p.cmd.Process.Pid, p.exited, grace)
	p.cmd = nil
	return err
}
