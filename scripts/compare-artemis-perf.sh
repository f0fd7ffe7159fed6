#!/usr/bin/env bash
# Side-by-side: pslab over STOMP versus Artemis's own `artemis perf client`
# (CORE protocol), against the same Artemis instance on loopback, 1 producer
# / 1 consumer, 100 B, non-durable (topic), non-persistent, saturating,
# interleaved rounds. Writes results/artemis-perf/.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
out=results/artemis-perf
mkdir -p "$out"
go build -o /tmp/pslab-perf ./cmd/pslab
/tmp/pslab-perf broker stop artemis >/dev/null 2>&1 || true
/tmp/pslab-perf broker start artemis >/dev/null
trap '/tmp/pslab-perf broker stop artemis >/dev/null 2>&1 || true' EXIT
I=$(go run ./cmd/pslab doctor | awk '/ artemis /{print $NF}')
PW=$(sed -n 's/^password=//p' "$I/pslab-credentials")
: >"$out/raw.txt"
start=$(date +%s)
for i in $(seq 1 "$rounds"); do
  rm -f /tmp/perf.json
  "$I/bin/artemis" perf client --user pslab --password "$PW" --url tcp://127.0.0.1:61616 \
    --message-size 100 --producers 1 --consumers 1 --duration 10 --warmup 2 \
    --json /tmp/perf.json topic://pslab-perf >/tmp/perf.out 2>&1
  # The JSON is a list of per-interval samples (about 1 s each): received
  # messages per second over the samples after the warm-up, and the p99
  # transfer (end-to-end) time of those intervals in ms.
  perf=$(python3 - <<'PY'
import json
d = [s for s in json.load(open("/tmp/perf.json")) if s.get("sampleType") == "interval"]
after = [(a, b) for a, b in zip(d, d[1:]) if not b.get("warmup")]
rate = sum(b["received"] for _, b in after) / ((after[-1][1]["time"] - after[0][0]["time"]) / 1000)
p99 = max(b["transferTime"]["99"] for _, b in after) / 1000
print(round(rate), round(p99, 1))
PY
)
  rm -rf /tmp/pslab-perf-run
  /tmp/pslab-perf run scenarios/bench-1-1-100.yaml --broker artemis --reps 1 \
    --url "artemis=stomp://pslab:${PW}@127.0.0.1:61613" --out /tmp/pslab-perf-run >/dev/null 2>&1
  ps=$(python3 -c 'import json; r=json.loads(open("/tmp/pslab-perf-run/records.jsonl").readline()); print(round(r["result"]["sub_tput"]), round(r["result"]["pub_tput"]), round(r["result"]["latency"]["p99_ms"],1))')
  echo "round $i perf_received $perf pslab_sub_pub_p99 $ps" | tee -a "$out/raw.txt"
done
echo "wall $(( $(date +%s) - start )) s" >>"$out/raw.txt"
python3 - "$out" "$rounds" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], sys.argv[2]
perf, psub, ppub, pp99, pf99 = [], [], [], [], []
wall = ""
for line in open(f"{out}/raw.txt"):
    f = line.split()
    if f[0] == "wall":
        wall = f[1]
        continue
    perf.append(float(f[3])); pf99.append(float(f[4]))
    psub.append(float(f[6])); ppub.append(float(f[7])); pp99.append(float(f[8]))
m = statistics.mean
text = f"""# pslab (STOMP) vs `artemis perf client` (CORE), 1/1/1, 100 B, non-durable, non-persistent, loopback

Same Artemis 2.44.0 instance (`pslab broker start artemis`), same machine
(2 cores, client and broker sharing them), {rounds} interleaved rounds, both
saturating. Made by `bash scripts/compare-artemis-perf.sh` (wall time {wall} s).

| tool | protocol | subscriber msgs/s, mean (min-max) | publisher msgs/s | p99 latency ms, mean |
|---|---|---:|---:|---:|
| artemis perf client (10 s after 2 s warm-up, `--max-pending 1`) | CORE | {m(perf):,.0f} ({min(perf):,.0f}-{max(perf):,.0f}) | (= received) | {m(pf99):,.1f} (transfer time, worst 1 s interval) |
| pslab (scenarios/bench-1-1-100.yaml: 10 s window after 2 s warm-up) | STOMP | {m(psub):,.0f} ({min(psub):,.0f}-{max(psub):,.0f}) | {m(ppub):,.0f} | {m(pp99):,.1f} (whole window) |

The perf client's producer waits for each send to complete (`--max-pending
1`), so its queue stays short; pslab's publisher keeps a window of
unconfirmed sends (receipts every window/4), which queues at the broker
when the subscriber is slower, hence its latency. Raw rounds: raw.txt.
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
