package main

import (
	"fmt"
	"os"
	"strings"
)

// urlFrom reads the value of --url NAME=VALUE: a URL, or env:VAR (the URL
// is in environment variable VAR) or file:PATH (the URL is the file's
// content), so that credentials need not be on the command line, where ps
// shows them to every user of the machine.
func urlFrom(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, "env:"):
		name := strings.TrimPrefix(v, "env:")
		u := strings.TrimSpace(os.Getenv(name))
		if u == "" {
			return "", fmt.Errorf("environment variable %s is not set or empty", name)
		}
		return u, nil
	case strings.HasPrefix(v, "file:"):
		path := strings.TrimPrefix(v, "file:")
		st, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s is readable by others (mode %v): chmod 600 it, it holds credentials", path, st.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		u := strings.TrimSpace(string(data))
		if u == "" {
			return "", fmt.Errorf("%s is empty", path)
		}
		return u, nil
	}
	return v, nil
}
