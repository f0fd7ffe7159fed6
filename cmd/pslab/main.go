// Command pslab measures publish/subscribe brokers over a wireline and an
// emulated 802.11 link. Each command lives in a file of its own; the work is
// done by the packages under internal/ and netem/.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"pslab/internal/broker"
	_ "pslab/internal/brokers/all" // every broker, registered
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // a run failed
	exitBadInput = 2 // bad input: nothing was run
)

// badInputError marks errors that mean "nothing was run, fix your input".
type badInputError struct{ err error }

func (e badInputError) Error() string { return e.err.Error() }
func (e badInputError) Unwrap() error { return e.err }

// badInput wraps err so that pslab exits with code 2.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return badInputError{err}
}

// badInputf formats a bad-input error.
func badInputf(format string, a ...any) error { return badInput(fmt.Errorf(format, a...)) }

var rootCmd = &cobra.Command{
	Use:   "pslab",
	Short: "Measure pub/sub brokers over wireline and an emulated 802.11 link",
	Long: `pslab runs publish/subscribe load (publishers and subscribers, one connection
each) against NATS and ActiveMQ Artemis, over a wireline path or an emulated
wireless link, and records throughput, latency and delivery counts per case.`,
	Example: `  pslab run scenarios/smoke.yaml
  pslab doctor`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	broker.RunChildIfRequested()
	os.Exit(execute(os.Args[1:]))
}

// execute runs the command line and maps errors to exit codes.
func execute(args []string) int {
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pslab:", err)
	}
	return exitCodeOf(err)
}

// exitCodeOf is the exit code of a command that returned err.
func exitCodeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var ie interruptedError
	if errors.As(err, &ie) {
		return ie.exitCode()
	}
	var bad badInputError
	if errors.As(err, &bad) || isCobraUsageError(err) {
		return exitBadInput
	}
	return exitFailed
}

// isCobraUsageError recognises cobra's own command-line errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// argsCheck makes a cobra argument check report bad input (exit 2).
func argsCheck(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return badInput(check(cmd, args)) }
}

var cpuProfile string

// gcPercent is pslab's GOGC unless the environment sets one. The load
// client allocates per delivered message (nats.go copies each message), so
// with Go's default of 100 the collector ran several times a second and
// cost about a tenth of the client's CPU on a saturated unshaped path
// (docs/design.md, "The load client's own cost"); its live heap is small
// (tens of MB), so a heap five times the live one costs little memory.
const gcPercent = 400

func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

func init() {
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(err) })
	rootCmd.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of pslab (the client side) to this file")
	rootCmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		setGCPercent()
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		return pprof.StartCPUProfile(f)
	}
	rootCmd.PersistentPostRun = func(*cobra.Command, []string) {
		if cpuProfile != "" {
			pprof.StopCPUProfile()
		}
	}
}
