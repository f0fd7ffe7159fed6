#!/usr/bin/env bash
# Makes the root file system of pslab's Mosquitto image from Debian packages
# alone (no image registry): a minimal bookworm with Debian's mosquitto
# (2.0.11, the version pslab installs on the host), written as a tar stream
# to stdout, for `docker import`.
#   docker/mosquitto/rootfs.sh | docker import - pslab/mosquitto:2.0.11
# Needs root and debootstrap (apt-get install debootstrap); fetches about
# 40 MB from the Debian mirror (MIRROR). docker/build-local.sh calls it and
# labels the image with this file's hash, so editing this file is what makes
# the image rebuild.
set -euo pipefail
SUITE=bookworm
MIRROR=${MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d "${TMPDIR:-/tmp}/pslab-mosquitto-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=mosquitto "$SUITE" "$root" "$MIRROR" >&2
# The package's own configuration and service are not used: the compose
# service gives its own (docker/mosquitto/mosquitto.conf).
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
	"$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
mkdir -p "$root/mosquitto/data"
tar -C "$root" --numeric-owner -c .
