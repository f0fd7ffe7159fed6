#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it). Formatting and vet
# checks, then the hermetic tests of every package with the race detector
# (-short: no broker, no root, no network namespaces; they fail fast, in
# about a minute and a half), then it installs what the integration tests
# need (Artemis, through Maven; Mosquitto, through apt-get) and runs the
# integration tests (real NATS, Artemis and Mosquitto, root link
# emulation) of the packages that have any.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== hermetic tests: go test -short -race"
go test -short -race -count=1 -timeout 10m ./... 2>&1 | tee /tmp/pslab-test-short.log

# Every committed record, superseded ones included, reads into the typed
# schema and writes back byte-identically (under -race above only every
# 25th line: the whole 71 MB takes minutes with the race detector).
echo "== committed records write back byte-identically"
go test -count=1 -run TestCommittedRecordsWriteBackByteIdentically ./internal/results

echo "== install Artemis (cached after the first time) and Mosquitto (Debian's package, as root)"
go run ./cmd/pslab broker install artemis
go run ./cmd/pslab broker install mosquitto

# A package has integration tests when one of its tests skips in -short
# mode (itself, or through internal/testbroker's SkipShort and the helpers
# that call it); every other package was run in full above.
integration=()
while read -r pkg dir; do
  if grep -qsE 'testing\.Short\(\)|testbroker\.(SkipShort|Artemis|RunArtemis|NATSChild)\(' "$dir"/*_test.go; then
    integration+=("$pkg")
  fi
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)

echo "== integration tests: go test -race ${integration[*]}"
go test -race -count=1 -timeout 30m "${integration[@]}" 2>&1 | tee /tmp/pslab-test.log

# Broker containers for real (issue 17, docs/containers.md): pslab's own
# Docker daemon (no bridge, no iptables), the images built locally (cached
# by the hash of their inputs), both brokers brought up with compose and
# measured through the lab over wireline and wifi-paper. Needs root;
# PSLAB_SKIP_CONTAINERS=1 leaves it out (say so when you do).
if [ "$(id -u)" = 0 ] && [ "${PSLAB_SKIP_CONTAINERS:-0}" != 1 ]; then
  echo "== broker containers: scripts/test-containers.sh"
  QUICK=1 bash scripts/test-containers.sh
else
  echo "== broker containers: skipped (needs root; PSLAB_SKIP_CONTAINERS=${PSLAB_SKIP_CONTAINERS:-0})"
fi
