package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PartsFile, in a run's output directory, has a line per part of the run:
// each `pslab run` or `pslab run --resume` of it, with its start, wall
// time, exit status, pslab's version and the machine, so that a run split
// over sessions or machines says which part ran where.
const PartsFile = "parts.log"

// Part is the line of the running part in its run's parts.log.
type Part struct {
	path  string
	start time.Time
	line  string // as written while running
	about string // version, machine, command
}

// BeginPart appends the line of a part starting now to dir's parts.log,
// saying it is running: a part killed outright (SIGKILL, a machine
// restart) keeps that line, so the log still shows it ran and never
// ended. about is what follows the outcome (version, machine, command).
func BeginPart(dir, about string) (*Part, error) {
	p := &Part{path: filepath.Join(dir, PartsFile), start: time.Now(), about: about}
	p.line = p.format("running (no end recorded)")
	old, err := os.ReadFile(p.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	return p, WriteAtomic(p.path, append(old, p.line+"\n"...))
}

func (p *Part) format(outcome string) string {
	return fmt.Sprintf("part: start %s, %s, %s", p.start.UTC().Format(time.RFC3339), outcome, p.about)
}

// End replaces the part's line by its outcome: wall time and exit status.
func (p *Part) End(exit int) error {
	data, err := os.ReadFile(p.path)
	if err != nil {
		return err
	}
	i := bytes.LastIndex(data, []byte(p.line+"\n"))
	if i < 0 {
		return fmt.Errorf("%s: the running part's line is gone", p.path)
	}
	end := p.format(fmt.Sprintf("%d s, exit %d", int(time.Since(p.start).Seconds()), exit))
	return WriteAtomic(p.path, append(append(data[:i:i], end+"\n"...), data[i+len(p.line)+1:]...))
}

// LastPart is the last line of dir's parts.log and whether that part
// ended with exit 0 (a finished run); "" without a parts.log.
func LastPart(dir string) (line string, finished bool, n int, err error) {
	data, err := os.ReadFile(filepath.Join(dir, PartsFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, 0, nil
	}
	if err != nil {
		return "", false, 0, err
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "part:") {
			line = l
			n++
		}
	}
	return line, strings.Contains(line, ", exit 0,"), n, nil
}
