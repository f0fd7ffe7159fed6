#!/usr/bin/env bash
# TLS off against on over the emulated 802.11 link (issue 36, item 8):
# scenarios/tls-wifi.yaml (1/1/1 100 B and 4 KB, 1/10/1 100 B, each with
# tls off and on; NATS core and Artemis over STOMP; wifi-paper, 2
# repetitions, 2 labs at once), then the report (REPORT.md, with the TLS
# table: handshake cost, and throughput and latency against the same case
# without TLS). Needs root (namespaces) and Artemis installed
# (`pslab broker install artemis`). Measures: run it under the
# machine-wide lock, e.g. `flock /tmp/pslab-heavy.lock bash scripts/tls-wifi.sh`.
#   OUT (default results/tls-wifi), PARALLEL (default 2), PSLAB (a pslab
#   binary to use instead of building the working tree)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/tls-wifi}
parallel=${PARALLEL:-2}
work=$(mktemp -d /tmp/tls-wifi.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -n "${PSLAB:-}" ]; then
  cp "$PSLAB" "$work/pslab"
else
  go build -o "$work/pslab" ./cmd/pslab
fi
rm -rf "$out"
mkdir -p "$out"
t0=$(date +%s)
"$work/pslab" run scenarios/tls-wifi.yaml --out "$out" --parallel "$parallel" 2>&1 | tee "$out/run.log"
echo "wall time: $(( $(date +%s) - t0 )) s" | tee -a "$out/run.log"
"$work/pslab" report "$out" >"$out/REPORT.md"
"$work/pslab" version >"$out/build.txt" 2>&1 || true
