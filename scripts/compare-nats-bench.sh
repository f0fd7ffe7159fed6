#!/usr/bin/env bash
# Side-by-side: pslab versus the nats.go project's own nats-bench, against
# the same nats-server (pslab's embedded one, started with `pslab broker
# start nats` on loopback), 1 publisher / 1 subscriber / 100 B, interleaved
# runs so both see the same machine state. Writes results/nats-bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
out=results/nats-bench
mkdir -p "$out"
go build -o /tmp/pslab-bench ./cmd/pslab
GOFLAGS= go install github.com/nats-io/nats.go/examples/nats-bench@v1.55.0
bench=$(go env GOPATH)/bin/nats-bench
/tmp/pslab-bench broker stop nats >/dev/null 2>&1 || true
/tmp/pslab-bench broker start nats >/tmp/pslab-nats.state
trap '/tmp/pslab-bench broker stop nats >/dev/null 2>&1 || true' EXIT
pw=$(awk '/^password/{print $2}' /tmp/pslab-nats.state)
url="nats://pslab:${pw}@127.0.0.1:4222"
: >"$out/raw.txt"
start=$(date +%s)
for i in $(seq 1 "$rounds"); do
  # nats-bench: 4 M messages of 100 B (about 5 s at its rate).
  nb=$("$bench" -s "$url" -np 1 -ns 1 -n 4000000 -ms 100 pslab.bench 2>&1 | awk '/^ Sub stats/{gsub(",","",$3); print $3}')
  # pslab: the same case, a 10 s window after a 2 s warm-up, with its
  # default flow-control window (case 01) and with a window that never binds
  # on loopback, bounded by TCP backpressure like nats-bench (case 02).
  rm -rf /tmp/pslab-bench-run
  /tmp/pslab-bench run scenarios/bench-1-1-100.yaml --reps 1 --url "nats=$url" --out /tmp/pslab-bench-run >/dev/null 2>&1
  ps=$(python3 -c '
import json
recs = {r["case"]: r for r in map(json.loads, open("/tmp/pslab-bench-run/records.jsonl"))}
print(" ".join(str(round(recs[c]["result"]["sub_tput"])) for c in ("01", "02")))')
  echo "round $i nats-bench_sub $nb pslab_default_window_sub_and_tcp_bounded_sub $ps" | tee -a "$out/raw.txt"
done
python3 - "$out" "$rounds" "$(( $(date +%s) - start ))" <<'PY'
import statistics, sys
out, rounds, wall = sys.argv[1], sys.argv[2], sys.argv[3]
nb, dflt, wide = [], [], []
for line in open(f"{out}/raw.txt"):
    f = line.split()
    nb.append(float(f[3])); dflt.append(float(f[5])); wide.append(float(f[6]))
m = statistics.mean
def row(name, xs):
    return f"| {name} | {m(xs):,.0f} | {min(xs):,.0f} | {max(xs):,.0f} | {m(xs)/m(nb):.2f} |"
text = f"""# pslab vs nats-bench, 1 publisher / 1 subscriber / 100 B, core NATS, loopback

Same nats-server (pslab's embedded nats-server, `pslab broker start nats`),
same machine (2 cores), {rounds} interleaved rounds. Made by
`bash scripts/compare-nats-bench.sh` (wall time {wall} s).

| tool | subscriber msgs/s, mean | min | max | / nats-bench |
|---|---:|---:|---:|---:|
{row("nats-bench (nats.go v1.55.0 example)", nb)}
{row("pslab, default flow-control window (655 messages, PING/PONG)", dflt)}
{row("pslab, window 100 000: bounded by TCP backpressure like nats-bench", wide)}

nats-bench's publisher is bounded only by TCP backpressure (the kernel's
socket buffers) and its subscriber only counts. pslab's default publisher
keeps at most 64 KiB unconfirmed (a PING/PONG round trip every half window):
that bound, not the per-message work, costs most of the difference (a probe
of the driver alone with no accounting gave 0.95 M msgs/s at the default
window and 1.6-1.7 M without it). With the bound lifted (case 02 of
scenarios/bench-1-1-100.yaml) pslab still stamps and fully decodes every
body (CRC-32C and content check), counts sequence numbers and records each
latency; its latency then includes the socket-buffer queue (see the
records). Raw rounds: raw.txt.
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
