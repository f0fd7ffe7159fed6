#!/usr/bin/env bash
# The broker containers, for real (docs/containers.md): starts pslab's own
# Docker daemon (scripts/lab-dockerd.sh: no bridge, no iptables; installs
# docker.io and docker-compose if missing), builds the images locally
# (docker/build-local.sh; images whose inputs did not change are kept),
# brings up both broker containers with compose and no network of Docker's
# (docker/compose.isolated.yml), and runs TestBrokerContainers: the smoke
# suite on both containers over the wireline and wifi-paper through the
# lab, then checks that the containers' namespace and the host hold nothing
# of the lab's. Takes the containers down (volumes too) at the end, and the
# daemon if this script started it (KEEP_DOCKERD=1 keeps it).
# As root; on a shared machine under the heavy lock:
#   flock -o /tmp/pslab-heavy.lock bash scripts/test-containers.sh
# QUICK=1 runs the suite with --quick.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
say() { printf 'test-containers: %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
	say "needs root (a Docker daemon, network namespaces)"
	exit 1
fi
command -v debootstrap >/dev/null || {
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
}
dockerd_was_up=0
scripts/lab-dockerd.sh status && dockerd_was_up=1
# Its one line of output is DOCKER_HOST=...; if it fails (an apt or dpkg
# error, a daemon that does not come up), stop here with its reason above.
dockerhost=$(scripts/lab-dockerd.sh start) || {
	say "could not start the lab's Docker daemon (scripts/lab-dockerd.sh start failed; its error is above)"
	exit 1
}
export "$dockerhost"

project=pslabtest
envfile=$(mktemp)
secret() { head -c 18 /dev/urandom | base64 | tr '+/' '-_'; }
NATS_VERSION=$(go list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
cat >"$envfile" <<EOT
NATS_USER=pslab
NATS_PASSWORD=$(secret)
ARTEMIS_USER=pslab
ARTEMIS_PASSWORD=$(secret)
NATS_IMAGE=pslab/nats:${NATS_VERSION#v}
ARTEMIS_IMAGE=pslab/artemis:2.44.0
NATS_CONTAINER=$project-nats
ARTEMIS_CONTAINER=$project-artemis
MOSQUITTO_USER=pslab
MOSQUITTO_PASSWORD=$(secret)
MOSQUITTO_CONTAINER=$project-mosquitto
EOT
compose=(docker-compose --env-file "$envfile" -p "$project" -f docker-compose.yml -f docker/compose.isolated.yml)

cleanup() {
	"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
	rm -f "$envfile"
	if [ "$dockerd_was_up" = 0 ] && [ "${KEEP_DOCKERD:-0}" != 1 ]; then
		scripts/lab-dockerd.sh stop
	fi
}
trap cleanup EXIT

t=$SECONDS
docker/build-local.sh nats artemis
say "images ready in $((SECONDS - t)) s"

t=$SECONDS
"${compose[@]}" up -d nats artemis
# Ready when each says so in its log (nothing on the host can dial them).
wait_log() { # CONTAINER PATTERN
	for _ in $(seq 1 240); do
		if docker logs "$1" 2>&1 | grep -q "$2"; then return 0; fi
		if [ "$(docker inspect -f '{{.State.Running}}' "$1")" != true ]; then break; fi
		sleep 0.5
	done
	say "$1 did not become ready; its log:"
	docker logs --tail 30 "$1" >&2
	return 1
}
wait_log "$project-nats" "Server is ready"
wait_log "$project-artemis" "AMQ221007"
say "containers up in $((SECONDS - t)) s"

set -a
# shellcheck disable=SC1090
. "$envfile"
set +a
t=$SECONDS
PSLAB_CONTAINER_TEST=1 PSLAB_CONTAINER_QUICK=${QUICK:-0} \
	go test -count=1 -timeout 30m -run '^TestBrokerContainers$' -v ./cmd/pslab
say "measurement in $((SECONDS - t)) s; whole test $((SECONDS - t0)) s"
