// Package buildid tells builds of pslab apart, with or without VCS
// stamping (go build -buildvcs=false, or a build outside a checkout,
// leaves a binary that only says "devel"):
//
//   - a binary stamped with its VCS revision is named by it: the first 12
//     hex digits, "+dirty" when the stamp says the tree was modified;
//   - otherwise by the SHA-256 of the running executable, "sha256:" and its
//     first 12 hex digits: two binaries with the same name are the same
//     bytes; a `go run` of the same sources with the same toolchain and
//     flags builds the same bytes again;
//   - "+dirty" follows the hash when the source tree the binary was built
//     from differs from its commit in a build input (*.go, go.mod, go.sum,
//     embedded files). That is known only for binaries `go run` and `go
//     test` built just now (the executable lies in a go-build directory)
//     from a git checkout still on disk (found through the source path
//     compiled in; not with -trimpath): their source is the tree as it is
//     now. For any other binary the tree it came from is unknown, and the
//     long form says so.
//
// Current is computed once per process. Short goes where a version string
// goes (records' versions.pslab, run.json, `pslab version`), Long beside it.
// FileSum and ShortSum are the same identity for any other file (a
// configuration, a distribution).
package buildid

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// ID is the identity of a build.
type ID struct {
	// Revision is the full VCS revision: from the binary's stamp
	// (Stamped), or from the source tree a `go run`/`go test` build came
	// from; empty when neither is known.
	Revision string
	Stamped  bool
	// Dirty says the tree differed from Revision in a build input;
	// DirtyKnown says whether that could be told at all.
	Dirty, DirtyKnown bool
	// ExeSHA256 is the hex SHA-256 of the running executable ("" when it
	// could not be read).
	ExeSHA256 string
}

// ShortSum is the short form of a hex SHA-256: "sha256:" and 12 digits.
func ShortSum(hexSum string) string {
	if len(hexSum) > 12 {
		hexSum = hexSum[:12]
	}
	return "sha256:" + hexSum
}

// FileSum is the hex SHA-256 of a file's contents.
func FileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Short is the build's name: the stamped revision (12 digits), else the
// executable's hash, each with "+dirty" when the tree is known to have
// differed; "devel" when nothing is known.
func (id ID) Short() string {
	var s string
	switch {
	case id.Stamped && id.Revision != "":
		s = id.Revision[:min(12, len(id.Revision))]
	case id.ExeSHA256 != "":
		s = ShortSum(id.ExeSHA256)
	default:
		return "devel"
	}
	if id.DirtyKnown && id.Dirty {
		s += "+dirty"
	}
	return s
}

// Long says everything known: the revision and where it came from,
// whether the tree was dirty, and the executable's full hash.
func (id ID) Long() string {
	var parts []string
	switch {
	case id.Stamped:
		parts = append(parts, "vcs "+id.Revision+dirtyText(id))
	case id.Revision != "":
		parts = append(parts, "source tree at "+id.Revision+dirtyText(id))
	default:
		parts = append(parts, "source tree unknown")
	}
	if id.ExeSHA256 != "" {
		parts = append(parts, "executable sha256:"+id.ExeSHA256)
	}
	return strings.Join(parts, "; ")
}

func dirtyText(id ID) string {
	switch {
	case !id.DirtyKnown:
		return " (modified: unknown)"
	case id.Dirty:
		return "+dirty"
	}
	return ""
}

var (
	once    sync.Once
	current ID
)

// Current is the identity of the running pslab (computed once).
func Current() ID {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		exe, _ := os.Executable()
		_, src, _, _ := runtime.Caller(0)
		current = Of(bi, exe, src)
	})
	return current
}

// Of computes the identity of the build described by bi, running as the
// executable exe, whose file buildid.go was compiled from src (the
// module root is two directories up).
func Of(bi *debug.BuildInfo, exe, src string) ID {
	var id ID
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				id.Revision, id.Stamped = s.Value, s.Value != ""
			case "vcs.modified":
				id.Dirty, id.DirtyKnown = s.Value == "true", true
			}
		}
	}
	if exe != "" {
		if sum, err := FileSum(exe); err == nil {
			id.ExeSHA256 = sum
		}
	}
	if id.Stamped || !builtJustNow(exe) || !filepath.IsAbs(src) {
		return id
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(src)))
	if rev, dirty, ok := treeState(root); ok {
		id.Revision, id.Dirty, id.DirtyKnown = rev, dirty, true
	}
	return id
}

// builtJustNow reports whether exe was built by `go run` or `go test` for
// this run: it lies in a go-build directory (the go command's temporary
// work directory, or its build cache, which holds a binary only as long as
// its inputs are unchanged).
func builtJustNow(exe string) bool {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	if c := os.Getenv("GOCACHE"); c != "" && strings.HasPrefix(exe, filepath.Clean(c)+string(filepath.Separator)) {
		return true
	}
	return false
}

// buildInputs are the files of the tree that go into the binary: Go
// sources, the module files, and files embedded with go:embed.
var buildInputs = []string{":(glob)**/*.go", "go.mod", "go.sum", ":(glob)netem/profiles/**"}

// treeState is the revision of the git checkout at root (the pslab module)
// and whether a build input differs from it (modified, staged or
// untracked); ok is false when root is no such checkout or git cannot say.
func treeState(root string) (rev string, dirty, ok bool) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(mod)), "module pslab\n") {
		return "", false, false
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0") // a read, never a write to the index
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	rev, err = git("rev-parse", "--verify", "HEAD")
	if err != nil || rev == "" {
		return "", false, false
	}
	status, err := git(append([]string{"status", "--porcelain", "--untracked-files=all", "--"}, buildInputs...)...)
	if err != nil {
		return "", false, false
	}
	return rev, status != "", true
}
