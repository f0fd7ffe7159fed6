package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"pslab/internal/results"
)

// RunInfoFile is the file in a run's output directory that lets
// `pslab run --resume DIR` continue it: what was run, with which files and
// which pslab.
const RunInfoFile = "run.json"

// RunInfo describes a run for resuming it.
type RunInfo struct {
	// Command is the pslab command that made the run when it is not
	// pslab run ("capacity"): its flags are that command's.
	Command string `json:"command,omitempty"`
	Pslab   string `json:"pslab"`
	// Args are the run's scenario files and flags as given, without
	// --out, --resume, --force, --lab and --verbose.
	Args    []string         `json:"args"`
	Files   []FileHash       `json:"files"`
	Started time.Time        `json:"started"`
	Machine *results.Machine `json:"machine"`
	Resumed []ResumeOccasion `json:"resumed,omitempty"`
}

// FileHash is a scenario file and the SHA-256 of its contents.
type FileHash struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ResumeOccasion is one continuation of a run: when, where, and what was
// overridden with --force.
type ResumeOccasion struct {
	At      time.Time        `json:"at"`
	Machine *results.Machine `json:"machine"`
	Pslab   string           `json:"pslab"`
	Forced  []string         `json:"forced,omitempty"`
}

// NewRunInfo describes a run of files (scenario files) with args, now.
func NewRunInfo(args, files []string) (RunInfo, error) {
	info := RunInfo{Pslab: Version(), Args: args, Started: time.Now().UTC(), Machine: thisMachine()}
	for _, f := range files {
		h, err := hashFile(f)
		if err != nil {
			return info, err
		}
		info.Files = append(info.Files, FileHash{Path: f, SHA256: h})
	}
	return info, nil
}

func hashFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// Changes lists why resuming the run now would not continue the same
// plan: a changed or missing scenario file. Another pslab build is not
// among them: the run goes on, and the finished records of the other
// build are set aside and their rows start over (Options.ForceMixed,
// identity.go); VersionChange says so.
func (info RunInfo) Changes() []string {
	var out []string
	for _, f := range info.Files {
		h, err := hashFile(f.Path)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("scenario file %s: %v", f.Path, err))
		case h != f.SHA256:
			out = append(out, fmt.Sprintf("scenario file %s changed since the run started (sha256 %.12s, was %.12s)", f.Path, h, f.SHA256))
		}
	}
	return out
}

// VersionChange says how this pslab differs from the run's, empty when
// it does not.
func (info RunInfo) VersionChange() string {
	if v := Version(); v != info.Pslab {
		return fmt.Sprintf("pslab is version %s, the run was made with %s", v, info.Pslab)
	}
	return ""
}

// WriteRunInfo stores info in dir/run.json atomically.
func WriteRunInfo(dir string, info RunInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return results.WriteAtomic(filepath.Join(dir, RunInfoFile), append(data, '\n'))
}

// ReadRunInfo reads dir/run.json.
func ReadRunInfo(dir string) (RunInfo, error) {
	var info RunInfo
	path := filepath.Join(dir, RunInfoFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return info, fmt.Errorf("%s: no such file: %s is not the output directory of a pslab run that can be resumed", path, dir)
		}
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// NewResumeOccasion describes continuing a run here and now, with the
// changes --force overrode.
func NewResumeOccasion(forced []string) ResumeOccasion {
	return ResumeOccasion{At: time.Now().UTC(), Machine: thisMachine(), Pslab: Version(), Forced: forced}
}
