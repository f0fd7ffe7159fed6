package netem

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCrashedRunIsCleanedUp: a lab left up (as by a crash, no Down) is
// removed by Cleanup and by the next lab's Up.
func TestCrashedRunIsCleanedUp(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	crashed := New(Options{Prefix: testPrefix, Backend: BackendTBFNft})
	if err := crashed.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Apply(mustProfile(t, "wifi-paper")); err != nil {
		t.Fatal(err)
	}
	// Simulate the crash: the kernel drops a dead process's lock.
	crashed.mu.Lock()
	crashed.unlock()
	crashed.mu.Unlock()
	// A new run's Up removes the leftovers first and builds afresh.
	next := New(Options{Prefix: testPrefix, Backend: BackendTBFNft})
	if err := next.Up(t.Context()); err != nil {
		t.Fatalf("Up over a crashed run's leftovers: %v", err)
	}
	if _, err := next.Apply(mustProfile(t, "wifi-paper")); err != nil {
		t.Fatalf("Apply after cleaning leftovers: %v", err)
	}
	// A process left in the broker namespace keeps it alive: Cleanup names
	// it and leaves it running (it is not pslab's to kill).
	sleeper := exec.Command("sleep", "30")
	if err := next.StartInBroker(sleeper); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	if _, err := Cleanup(testPrefix); !errors.Is(err, ErrInUse) {
		t.Fatalf("Cleanup of a lab a live Lab holds: %v, want ErrInUse", err)
	}
	// Crash again; this time Cleanup alone removes it and says what.
	next.mu.Lock()
	next.unlock()
	next.mu.Unlock()
	removed, err := Cleanup(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Errorf("Cleanup removed %q, want the three namespaces", removed)
	} else if want := fmt.Sprint(sleeper.Process.Pid); !strings.Contains(removed[2], want) {
		t.Errorf("Cleanup did not name process %s left in the broker namespace: %q", want, removed[2])
	}
	if next.IsUp() {
		t.Error("still up after Cleanup")
	}
	if again, err := Cleanup(testPrefix); err != nil || len(again) != 0 {
		t.Errorf("second Cleanup: %q %v (want nothing to do)", again, err)
	}
	assertLabGone(t, testPrefix)
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}

// holdEnv makes the test binary act as a pslab run that brings the lab up
// and then crashes (exits without Down) when its stdin closes.
const holdEnv = "PSLAB_NETEM_TEST_HOLD"

func TestMain(m *testing.M) {
	if os.Getenv(holdEnv) == "1" {
		l := New(Options{Prefix: testPrefix, Backend: BackendTBFNft})
		p, _ := LoadProfile("wifi-paper")
		if err := l.Up(context.Background()); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if _, err := l.Apply(p); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("up")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3) // crash: no Down
	}
	os.Exit(m.Run())
}

// TestCrashedProcessIsCleanedUp: while another process holds a lab, its
// namespaces are not leftovers and nothing removes them; once that process
// dies without Down, Cleanup removes everything it left.
func TestCrashedProcessIsCleanedUp(t *testing.T) {
	requireRoot(t)
	host := hostSnapshot(t)
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), holdEnv+"=1")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "up\n" {
		t.Fatalf("holder process: %q %v", line, err)
	}
	_, err = Cleanup(testPrefix)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprint(holder.Process.Pid)) {
		t.Fatalf("Cleanup of a lab held by live pid %d: %v", holder.Process.Pid, err)
	}
	if err := New(Options{Prefix: testPrefix}).Up(t.Context()); !errors.Is(err, ErrInUse) {
		t.Fatalf("Up over a live lab: %v", err)
	}
	if !New(Options{Prefix: testPrefix}).IsUp() {
		t.Fatal("the live lab was removed")
	}
	stdin.Close()
	if err := holder.Wait(); err == nil || holder.ProcessState.ExitCode() != 3 {
		t.Fatalf("holder exit: %v", err)
	}
	removed, err := Cleanup(testPrefix)
	if err != nil || len(removed) != 3 {
		t.Fatalf("Cleanup after the crash: %q %v", removed, err)
	}
	t.Logf("removed: %q", removed)
	assertLabGone(t, testPrefix)
	if after := hostSnapshot(t); after != host {
		t.Errorf("host namespace changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}
