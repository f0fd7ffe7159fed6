package netem

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"pslab/netem/linkinfo"
)

//go:embed profiles/*.yaml
var builtinFS embed.FS

// ErrUnknownProfile is returned (wrapped) by LoadProfile for a name that is
// neither a built-in profile nor an existing file.
var ErrUnknownProfile = errors.New("unknown profile")

// BuiltinProfiles lists the names of the built-in profiles, sorted.
func BuiltinProfiles() []string {
	entries, err := builtinFS.ReadDir("profiles")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// LoadProfile loads a built-in profile by name (see BuiltinProfiles) or a
// YAML profile file by path. Errors name the file and line.
func LoadProfile(nameOrPath string) (Profile, error) {
	if nameOrPath == "" {
		return Profile{}, fmt.Errorf("%w: empty name (built-in: %s)", ErrUnknownProfile, strings.Join(BuiltinProfiles(), ", "))
	}
	if isBuiltinName(nameOrPath) {
		data, err := builtinFS.ReadFile("profiles/" + nameOrPath + ".yaml")
		if err == nil {
			return linkinfo.ParseProfile("profiles/"+nameOrPath+".yaml", data, nameOrPath)
		}
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Profile{}, fmt.Errorf("%w %q: not a built-in (%s) and no such file",
				ErrUnknownProfile, nameOrPath, strings.Join(BuiltinProfiles(), ", "))
		}
		return Profile{}, fmt.Errorf("%w: %v", ErrBadProfile, err)
	}
	base := strings.TrimSuffix(filepath.Base(nameOrPath), filepath.Ext(nameOrPath))
	return linkinfo.ParseProfile(nameOrPath, data, base)
}

func isBuiltinName(s string) bool {
	return !strings.ContainsAny(s, `/\`) && !strings.HasSuffix(s, ".yaml") && !strings.HasSuffix(s, ".yml")
}
