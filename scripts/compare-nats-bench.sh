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
  # pslab: the same case, a 10 s window after a 2 s warm-up.
  rm -rf /tmp/pslab-bench-run
  /tmp/pslab-bench run scenarios/bench-1-1-100.yaml --reps 1 --url "nats=$url" --out /tmp/pslab-bench-run >/dev/null 2>&1
  ps=$(python3 -c 'import json,sys; r=json.loads(open("/tmp/pslab-bench-run/records.jsonl").readline()); print(round(r["result"]["sub_tput"]))')
  echo "round $i nats-bench_sub $nb pslab_sub $ps" | tee -a "$out/raw.txt"
done
python3 - "$out" "$rounds" "$(( $(date +%s) - start ))" <<'PY'
import statistics, sys
out, rounds, wall = sys.argv[1], sys.argv[2], sys.argv[3]
nb, ps = [], []
for line in open(f"{out}/raw.txt"):
    f = line.split()
    nb.append(float(f[3])); ps.append(float(f[5]))
m_nb, m_ps = statistics.mean(nb), statistics.mean(ps)
text = f"""# pslab vs nats-bench, 1 publisher / 1 subscriber / 100 B, core NATS, loopback

Same nats-server (pslab's embedded nats-server, `pslab broker start nats`),
same machine (2 cores), {rounds} interleaved rounds. Made by
`bash scripts/compare-nats-bench.sh` (wall time {wall} s).

| tool | subscriber msgs/s, mean | min | max |
|---|---:|---:|---:|
| nats-bench (nats.go v1.55.0 example) | {m_nb:,.0f} | {min(nb):,.0f} | {max(nb):,.0f} |
| pslab (scenarios/bench-1-1-100.yaml) | {m_ps:,.0f} | {min(ps):,.0f} | {max(ps):,.0f} |

pslab / nats-bench = **{m_ps/m_nb:.2f}**

pslab does more per message than nats-bench: it stamps and fully decodes
every body (CRC-32C and content check), counts sequence numbers, records the
latency in an HDR histogram, and bounds the publisher with a flow-control
window (a PING/PONG flush every half window), where nats-bench publishes
unbounded and only counts. Raw rounds: raw.txt.
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
