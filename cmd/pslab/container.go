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
)

// containerBroker is how pslab reaches a broker container through the
// lab's router: the container's default name (docker-compose.yml's
// container_name), the URL scheme and port inside the container, and the
// environment variables (the names .env uses) that hold its credentials.
type containerBroker struct {
	defaultName string
	scheme      string
	port        int
	userVar     string
	passVar     string
	query       string // of the URL: nats's monitoring port (docker/nats/nats.conf)
}

var containerBrokers = map[string]containerBroker{
	"nats":    {"pslab-nats", "nats", 4222, "NATS_USER", "NATS_PASSWORD", "monitor=8222"},
	"artemis": {"pslab-artemis", "stomp", 61613, "ARTEMIS_USER", "ARTEMIS_PASSWORD", ""},
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
		return 0, fmt.Errorf("container %s is not running (docker compose up -d nats artemis)", container)
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
	for _, v := range vals {
		name, ctr, _ := strings.Cut(v, "=")
		cb, ok := containerBrokers[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("--container %s: unknown broker %q (want nats[=CONTAINER] or artemis[=CONTAINER])", v, name))
			continue
		}
		if seen[name] {
			problems = append(problems, fmt.Sprintf("--container %s: broker %s given twice", v, name))
			continue
		}
		seen[name] = true
		if ctr == "" {
			ctr = cb.defaultName
		}
		if _, given := urls[name]; !given {
			user, pass := env(cb.userVar), env(cb.passVar)
			if user == "" || pass == "" {
				problems = append(problems, fmt.Sprintf("--container %s: set %s and %s (as in .env, which pslab also reads from the working directory), or give --url %s=%s://USER:PASSWORD@10.77.2.2:%d",
					v, cb.userVar, cb.passVar, name, cb.scheme, cb.port))
			} else {
				u := url.URL{Scheme: cb.scheme, User: url.UserPassword(user, pass), Host: "10.77.2.2:" + strconv.Itoa(cb.port), RawQuery: cb.query}
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
					"run the brokers one at a time, or in one namespace (network_mode: \"service:nats\", as docker-compose.yml does)",
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
	// The lab records the namespace by a process in it. In compose the nats
	// container owns the namespace (Artemis joins it): its process lives as
	// long as the namespace, even when the Artemis container is restarted.
	if pid, ok := pids["nats"]; ok {
		return pid, pids, nil
	}
	return targets[0].pid, pids, nil
}

// sortedNames are the keys of m in order.
func sortedNames(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
