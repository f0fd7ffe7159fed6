package main

import (
	"bufio"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"pslab/internal/brokers"
)

// containerBrokers are the registered brokers that have a container
// (their descriptors' Container: default name, URL scheme and port inside
// the container, the environment variables of its credentials).
func containerBrokers() map[string]*brokers.Container {
	out := map[string]*brokers.Container{}
	for _, n := range brokers.Names() {
		if d, _ := brokers.Lookup(n); d.Container != nil {
			out[n] = d.Container
		}
	}
	return out
}

// containerTarget is one resolved --container value.
type containerTarget struct {
	broker, container string
	pid               int
	netns             uint64
}

// containerEnv looks up a credential: the environment first, then the
// .env file in the working directory (the one docker compose reads).
type containerEnv func(key string) string

// dotEnv reads KEY=VALUE lines of path (comments and blank lines skipped,
// one pair of surrounding quotes removed); a missing file is empty.
func dotEnv(path string) map[string]string {
	vals := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return vals
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vals[strings.TrimSpace(k)] = v
	}
	return vals
}

// processEnv is the environment, then ./.env.
func processEnv() containerEnv {
	file := dotEnv(".env")
	return func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return file[k]
	}
}

// dockerPID asks the docker CLI for the host PID of a running container.
func dockerPID(container string) (int, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return 0, errors.New("the docker CLI is not on PATH (apt-get install docker.io), or give --broker-pid and --url instead")
	}
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Running}} {{.State.Pid}}", container).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("docker inspect %s: %s", container, strings.TrimSpace(string(out)))
	}
	running, pid, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	n, err := strconv.Atoi(pid)
	if running != "true" || err != nil || n <= 0 {
		return 0, fmt.Errorf("container %s is not running (docker compose up -d)", container)
	}
	return n, nil
}

// netnsInode identifies the network namespace of pid.
func netnsInode(pid int) (uint64, error) {
	st, err := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return 0, err
	}
	return st.Sys().(*syscall.Stat_t).Ino, nil
}

// resolveContainers turns --container BROKER[=CONTAINER] values into what
// the lab needs: each broker's URL at the broker end of the emulated link
// (10.77.2.2, credentials from env unless --url gives the broker's URL),
// the one network namespace the lab's router is put in front of (every
// container must share it: docker-compose.yml runs Artemis in the NATS
// container's namespace), and each broker's own process for its CPU and
// memory samples. Every problem is reported at once.
func resolveContainers(vals []string, urls map[string]string, brokerPID int, env containerEnv,
	pidOf func(string) (int, error), nsOf func(int) (uint64, error)) (pid int, pids map[string]int, err error) {
	if len(vals) == 0 {
		return brokerPID, nil, nil
	}
	var problems []string
	if brokerPID != 0 {
		problems = append(problems, "--container and --broker-pid: give one of them (--container finds the PID itself)")
	}
	var targets []containerTarget
	seen := map[string]bool{}
	known := containerBrokers()
	for _, v := range vals {
		name, ctr, _ := strings.Cut(v, "=")
		cb, ok := known[name]
		if !ok {
			var want []string
			for _, n := range sortedKeys(known) {
				want = append(want, n+"[=CONTAINER]")
			}
			problems = append(problems, fmt.Sprintf("--container %s: unknown broker %q (want %s)", v, name, strings.Join(want, " or ")))
			continue
		}
		if seen[name] {
			problems = append(problems, fmt.Sprintf("--container %s: broker %s given twice", v, name))
			continue
		}
		seen[name] = true
		if ctr == "" {
			ctr = cb.Name
		}
		if _, given := urls[name]; !given {
			user, pass := env(cb.UserVar), env(cb.PassVar)
			if user == "" || pass == "" {
				problems = append(problems, fmt.Sprintf("--container %s: set %s and %s (as in .env, which pslab also reads from the working directory), or give --url %s=%s://USER:PASSWORD@10.77.2.2:%d",
					v, cb.UserVar, cb.PassVar, name, cb.Scheme, cb.Port))
			} else {
				u := url.URL{Scheme: cb.Scheme, User: url.UserPassword(user, pass), Host: "10.77.2.2:" + strconv.Itoa(cb.Port), RawQuery: cb.Query}
				urls[name] = u.String()
			}
		}
		t := containerTarget{broker: name, container: ctr}
		if t.pid, err = pidOf(ctr); err != nil {
			problems = append(problems, fmt.Sprintf("--container %s: %v", v, err))
			continue
		}
		if t.netns, err = nsOf(t.pid); err != nil {
			problems = append(problems, fmt.Sprintf("--container %s: network namespace of pid %d: %v", v, t.pid, err))
			continue
		}
		targets = append(targets, t)
	}
	if len(problems) == 0 && len(targets) > 1 {
		sort.Slice(targets, func(i, j int) bool { return targets[i].broker < targets[j].broker })
		for _, t := range targets[1:] {
			if t.netns != targets[0].netns {
				problems = append(problems, fmt.Sprintf("--container: %s (%s) and %s (%s) are in different network namespaces, and the lab's router reaches one: "+
					"run the brokers one at a time, or in one namespace (network_mode: \"service:NAME\", as docker-compose.yml does)",
					targets[0].broker, targets[0].container, t.broker, t.container))
			}
		}
	}
	if len(problems) > 0 {
		return 0, nil, badInput(errors.New(strings.Join(problems, "\n")))
	}
	pids = map[string]int{}
	for _, t := range targets {
		pids[t.broker] = t.pid
	}
	// The lab records the namespace by a process in it. In compose one
	// container owns the namespace and the others join it: its process
	// lives as long as the namespace, even when another container is
	// restarted.
	for _, t := range targets {
		if known[t.broker].OwnsNamespace {
			return t.pid, pids, nil
		}
	}
	return targets[0].pid, pids, nil
}

// sortedKeys are the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
