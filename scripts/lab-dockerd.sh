#!/usr/bin/env bash
# A Docker daemon of pslab's own, for the container test: its own socket,
# data root, exec root and pid file (a user's daemon is not disturbed), and
# no network of its own: no bridge, no iptables rules. Containers on it run
# with network_mode none; pslab's lab is their only way in.
#   scripts/lab-dockerd.sh start   # prints DOCKER_HOST=... ; installs docker.io if missing
#   scripts/lab-dockerd.sh stop
#   scripts/lab-dockerd.sh status  # exit 0 if this daemon is running
# The data root (images: the build cache) stays between runs.
set -euo pipefail
ROOT=${PSLAB_DOCKERD_ROOT:-/var/lib/pslab-docker}
RUN=${PSLAB_DOCKERD_RUN:-/run/pslab-docker}
SOCK=$RUN.sock
PIDFILE=$RUN.pid
export DOCKER_HOST=unix://$SOCK

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

case ${1:-} in
start)
	if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null; then
		echo "lab-dockerd: installing docker.io and docker-compose" >&2
		apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose >&2
	fi
	if ! running; then
		mkdir -p "$ROOT" "$RUN"
		# The daemon outlives this script: it must not inherit any other open
		# file, least of all a lock the caller holds (flock).
		(
			for fd in $(ls "/proc/$BASHPID/fd"); do
				if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
			done
			exec setsid dockerd --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
				--data-root "$ROOT" --exec-root "$RUN" --pidfile "$PIDFILE" -H "$DOCKER_HOST" \
				>"$RUN.log" 2>&1 </dev/null
		) &
		for _ in $(seq 1 120); do
			docker version >/dev/null 2>&1 && break
			sleep 0.5
		done
		docker version >/dev/null 2>&1 || {
			echo "lab-dockerd: dockerd did not come up; its log: $RUN.log" >&2
			tail -20 "$RUN.log" >&2
			exit 1
		}
	fi
	echo "DOCKER_HOST=$DOCKER_HOST"
	;;
status)
	running
	;;
stop)
	if running; then
		pid=$(cat "$PIDFILE")
		kill "$pid"
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
	fi
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
