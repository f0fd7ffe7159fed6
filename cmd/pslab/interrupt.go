package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// interruptedError is the cause of a run's context ended by a signal: the
// run stopped at the user's request, and pslab exits with 128 + the
// signal's number (130 for SIGINT, 143 for SIGTERM), as shells expect.
type interruptedError struct{ sig syscall.Signal }

func (e interruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s: the case in progress is recorded as interrupted, or not at all", signalName(e.sig))
}

// exitCode is 128 + the signal number.
func (e interruptedError) exitCode() int { return 128 + int(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// interruptible returns a context that ends at the first SIGINT or SIGTERM
// with an interruptedError as its cause; a second signal exits at once
// (with the same code) without cleaning up: `pslab clean` and the next run
// remove what is left. stop ends the watch.
func interruptible(parent context.Context, log io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				sig, _ := s.(syscall.Signal)
				if first {
					first = false
					fmt.Fprintf(log, "\n%s: stopping (a second signal exits at once)\n", signalName(sig))
					cancel(interruptedError{sig})
					continue
				}
				fmt.Fprintf(log, "%s again: exiting now; `pslab clean` removes what is left\n", signalName(sig))
				os.Exit(interruptedError{sig}.exitCode())
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// interruption returns the interruptedError behind err or ctx, if any.
func interruption(ctx context.Context, err error) (interruptedError, bool) {
	var ie interruptedError
	if errors.As(err, &ie) {
		return ie, true
	}
	if errors.As(context.Cause(ctx), &ie) {
		return ie, true
	}
	return ie, false
}
