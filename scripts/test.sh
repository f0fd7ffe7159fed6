#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it). It installs what the
# integration tests need (Artemis, through Maven), then runs formatting and
# vet checks and the whole test suite with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== install Artemis (cached after the first time)"
go run ./cmd/pslab broker install artemis

echo "== go test -race"
go test -race -count=1 -timeout 30m ./... 2>&1 | tee /tmp/pslab-test.log
