#!/usr/bin/env bash
# Makes the root file system of pslab's Java base image from Debian packages
# alone (no image registry): a minimal bookworm with openjdk-17-jre-headless,
# written as a tar stream to stdout, for `docker import`.
#   docker/java/rootfs.sh | docker import - pslab/java17:bookworm
# Needs root and debootstrap (apt-get install debootstrap); takes about
# 2 minutes and fetches about 90 MB from the Debian mirror (MIRROR).
# docker/build-local.sh calls it and labels the image with this file's hash,
# so editing this file is what makes the image rebuild.
set -euo pipefail
SUITE=bookworm
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES=openjdk-17-jre-headless
root=$(mktemp -d "${TMPDIR:-/tmp}/pslab-java-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$MIRROR" >&2
# What a broker image does not need: package caches, docs, man pages.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
	"$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
tar -C "$root" --numeric-owner -c .
