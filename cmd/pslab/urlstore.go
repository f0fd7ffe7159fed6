package main

import (
	"net/url"
	"strings"
)

// A --url value goes into run.json without its credentials: env:VAR and
// file:PATH as given (references, no secret), a URL with credentials
// redacted and marked, "NAME=redacted:nats://user:xxxxx@host:4222" (a
// user name alone, which NATS takes as a token, becomes xxxxx too). A
// resume then needs the URL again on its command line (resumeURLs).

const redactedMark = "redacted:"

// storedURL is a --url NAME=VALUE as run.json keeps it.
func storedURL(v string) string {
	name, raw, ok := strings.Cut(v, "=")
	if !ok || strings.HasPrefix(raw, "env:") || strings.HasPrefix(raw, "file:") {
		return v
	}
	if r, secret := redactURL(raw); secret {
		return name + "=" + redactedMark + r
	}
	return v
}

// redactURL replaces the password, or a user name without a password (a
// token), by xxxxx; secret says whether the URL carried either.
func redactURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return "(unparsable URL with credentials)", true
		}
		return raw, false
	}
	if u.User == nil {
		return raw, false
	}
	if _, hasPass := u.User.Password(); hasPass {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else {
		u.User = url.User("xxxxx")
	}
	return u.String(), true
}

// redactedArgs is a command line as parts.log keeps it: every URL with
// credentials in an argument (--url nats=nats://u:PW@host, --url=…)
// redacted as run.json redacts it.
func redactedArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		j := strings.Index(a, "://")
		if j < 0 {
			continue
		}
		for j > 0 && isSchemeByte(a[j-1]) {
			j--
		}
		if r, secret := redactURL(a[j:]); secret {
			out[i] = a[:j] + r
		}
	}
	return out
}

// isSchemeByte tells whether c may be in a URL scheme (RFC 3986).
func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// resumeURLs puts the URLs given to a resume (--url NAME=VALUE, resolved
// as for a run) in place of the stored ones whose credentials run.json
// left out. Each such URL must be given, and be the run's (the same URL
// once redacted); a given URL the run had not, or whose credentials the
// run kept, is refused.
func resumeURLs(args, given []string, where string) ([]string, error) {
	byName := map[string]string{}
	for _, g := range given {
		name, raw, ok := strings.Cut(g, "=")
		if !ok {
			return nil, badInputf("--url %q: want NAME=URL", g)
		}
		byName[name] = raw
	}
	out := make([]string, 0, len(args))
	used := map[string]bool{}
	for _, a := range args {
		v, isURL := strings.CutPrefix(a, "--url=")
		name, raw, _ := strings.Cut(v, "=")
		stored, redacted := strings.CutPrefix(raw, redactedMark)
		if !isURL || !redacted {
			out = append(out, a)
			continue
		}
		g, ok := byName[name]
		if !ok {
			return nil, badInputf("%s keeps --url %s without its credentials (%s): give it again, e.g. --resume DIR --url %s=env:VAR", where, name, stored, name)
		}
		resolved, err := urlFrom(g)
		if err != nil {
			return nil, badInputf("--url %s: %v", name, err)
		}
		if r, _ := redactURL(resolved); r != stored {
			return nil, badInputf("--url %s: %s is not the run's broker (%s)", name, r, stored)
		}
		used[name] = true
		out = append(out, "--url="+name+"="+g)
	}
	for name := range byName {
		if !used[name] {
			return nil, badInputf("--url %s: %s keeps that URL (or had none): --resume takes it from there", name, where)
		}
	}
	return out, nil
}
