#!/usr/bin/env bash
# Builds the images of docker-compose.yml on this machine alone, for
# machines that reach no image registry (docker pull fails):
#   pslab/java17:bookworm   Debian bookworm + openjdk-17-jre-headless (debootstrap, docker import)
#   pslab/nats:VERSION      static nats-server from go.mod's dependency, FROM scratch
#   pslab/artemis:VERSION   Artemis from the Maven distribution, on pslab/java17
#   pslab/mosquitto:VERSION Debian's mosquitto (debootstrap, docker import)
#   pslab/pslab:latest      pslab itself, on pslab/java17
# Usage: docker/build-local.sh [nats] [artemis] [mosquitto] [pslab]   (default: all)
# Then: NATS_IMAGE=pslab/nats:2.15.2 ARTEMIS_IMAGE=pslab/artemis:2.44.0 docker compose up -d
# (or put those two lines in .env).
#
# Each image carries the label pslab.inputs, a hash of what it is made of;
# an image whose label matches is kept, not rebuilt. Needs root (debootstrap),
# Go, and for Artemis its distribution in ~/.m2 (pslab broker install artemis
# puts it there). Builds use --network none: nothing is fetched inside.
set -euo pipefail
cd "$(dirname "$0")/.."
DOCKER=${DOCKER:-docker}
export DOCKER_BUILDKIT=0 # the classic builder: --network none, no buildx needed
NATS_VERSION=$(go list -m -f '{{.Version}}' github.com/nats-io/nats-server/v2)
NATS_VERSION=${NATS_VERSION#v}
ARTEMIS_VERSION=${ARTEMIS_VERSION:-2.44.0}
MOSQUITTO_VERSION=2.0.11 # Debian bookworm's, what pslab installs on the host
BASE=pslab/java17:bookworm
M2=${HOME}/.m2/repository/org/apache/activemq/apache-artemis/${ARTEMIS_VERSION}
TARBALL=apache-artemis-${ARTEMIS_VERSION}-bin.tar.gz

say() { printf 'build-local: %s\n' "$*" >&2; }

# inputs FILE... -- STRING...: the hash of files' contents and strings.
inputs() {
	{
		for a in "$@"; do
			if [ -f "$a" ]; then sha256sum "$a" | cut -d' ' -f1; else printf '%s\n' "$a"; fi
		done
	} | sha256sum | cut -c1-16
}

# current IMAGE HASH: the image exists and was built from these inputs.
current() {
	[ "$("$DOCKER" image inspect -f '{{index .Config.Labels "pslab.inputs"}}' "$1" 2>/dev/null)" = "$2" ]
}

image_id() { "$DOCKER" image inspect -f '{{.Id}}' "$1"; }

build() { # IMAGE HASH CONTEXT [build args]
	local image=$1 hash=$2 ctx=$3
	shift 3
	local t0=$SECONDS
	"$DOCKER" build -q --network none --label "pslab.inputs=$hash" -t "$image" "$@" "$ctx" >/dev/null
	say "$image built in $((SECONDS - t0)) s (inputs $hash)"
}

java_base() {
	local hash
	hash=$(inputs docker/java/rootfs.sh)
	if current "$BASE" "$hash"; then
		say "$BASE is current (inputs $hash)"
		return
	fi
	local t0=$SECONDS
	docker/java/rootfs.sh | "$DOCKER" import \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change "LABEL pslab.inputs=$hash" - "$BASE" >/dev/null
	say "$BASE built in $((SECONDS - t0)) s (inputs $hash)"
}

nats_image() {
	local image=pslab/nats:$NATS_VERSION hash ctx
	hash=$(inputs docker/nats/Dockerfile docker/nats/nats.conf "$(go version)" "$NATS_VERSION")
	if current "$image" "$hash"; then
		say "$image is current (inputs $hash)"
		return
	fi
	ctx=$(mktemp -d)
	cp docker/nats/Dockerfile docker/nats/nats.conf "$ctx/"
	CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$ctx/nats-server" github.com/nats-io/nats-server/v2
	build "$image" "$hash" "$ctx"
	rm -rf "$ctx"
}

artemis_dist() {
	if [ ! -f "$M2/$TARBALL" ]; then
		say "no $M2/$TARBALL: fetching it through Maven (pslab broker install artemis)"
		go run ./cmd/pslab broker install artemis >&2
	fi
}

artemis_image() {
	local image=pslab/artemis:$ARTEMIS_VERSION hash ctx
	artemis_dist
	java_base
	hash=$(inputs docker/artemis/Dockerfile docker/artemis/docker-run.sh "$M2/$TARBALL" "$(image_id "$BASE")")
	if current "$image" "$hash"; then
		say "$image is current (inputs $hash)"
		return
	fi
	ctx=$(mktemp -d)
	cp -p docker/artemis/Dockerfile docker/artemis/docker-run.sh "$ctx/"
	ln "$M2/$TARBALL" "$ctx/$TARBALL" 2>/dev/null || cp "$M2/$TARBALL" "$ctx/"
	build "$image" "$hash" "$ctx" --build-arg "BASE=$BASE" --build-arg "ARTEMIS_VERSION=$ARTEMIS_VERSION"
	rm -rf "$ctx"
}

mosquitto_image() {
	local image=pslab/mosquitto:$MOSQUITTO_VERSION hash t0
	hash=$(inputs docker/mosquitto/rootfs.sh "$MOSQUITTO_VERSION")
	if current "$image" "$hash"; then
		say "$image is current (inputs $hash)"
		return
	fi
	t0=$SECONDS
	docker/mosquitto/rootfs.sh | "$DOCKER" import \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'EXPOSE 1883' \
		--change 'CMD ["/usr/sbin/mosquitto", "-c", "/etc/pslab/mosquitto.conf"]' \
		--change "LABEL pslab.inputs=$hash" - "$image" >/dev/null
	say "$image built in $((SECONDS - t0)) s (inputs $hash)"
}

pslab_image() {
	local image=pslab/pslab:latest hash ctx
	artemis_dist
	java_base
	ctx=$(mktemp -d)
	CGO_ENABLED=0 go build -trimpath -o "$ctx/pslab" ./cmd/pslab
	hash=$(inputs docker/pslab/Dockerfile "$ctx/pslab" "$M2/$TARBALL" "$(image_id "$BASE")" \
		"$(tar -c --sort=name --mtime=@0 --owner=0 --group=0 scenarios | sha256sum)")
	if current "$image" "$hash"; then
		say "$image is current (inputs $hash)"
		rm -rf "$ctx"
		return
	fi
	cp docker/pslab/Dockerfile "$ctx/"
	cp -r scenarios "$ctx/"
	mkdir "$ctx/m2"
	cp "$M2/$TARBALL" "$M2/$TARBALL.sha1" "$ctx/m2/" 2>/dev/null || cp "$M2/$TARBALL" "$ctx/m2/"
	build "$image" "$hash" "$ctx" --build-arg "BASE=$BASE" --build-arg "ARTEMIS_VERSION=$ARTEMIS_VERSION"
	rm -rf "$ctx"
}

[ $# -gt 0 ] || set -- nats artemis mosquitto pslab
for what in "$@"; do
	case $what in
	nats) nats_image ;;
	artemis) artemis_image ;;
	mosquitto) mosquitto_image ;;
	pslab) pslab_image ;;
	*)
		say "unknown image $what (want nats, artemis, mosquitto, pslab)"
		exit 2
		;;
	esac
done
