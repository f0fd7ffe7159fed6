#!/usr/bin/env bash
# Side-by-side: pslab versus the nats.go project's own nats-bench, against
# the same nats-server (pslab's embedded one, started with `pslab broker
# start nats` on loopback), 1 publisher / 1 subscriber / 100 B, interleaved
# rounds so both see the same machine state. Both load clients run on the
# same CPUs, the broker on the others (pslab's default CPU plan: on 2 cores
# the clients on CPU 0, the broker on CPU 1): the server is started under
# taskset (pslab knows an external broker by URL only and cannot pin it),
# nats-bench under taskset, pslab pins itself by default (checked in its
# record). Prints and writes results/nats-bench/: subscriber throughput and
# the load client's CPU time per delivered message of both tools.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
clients=${CLIENT_CPUS:-0}
brokers=${BROKER_CPUS:-1}
out=${OUT:-results/nats-bench}
mkdir -p "$out"
go build -o /tmp/pslab-bench ./cmd/pslab
GOFLAGS= go install github.com/nats-io/nats.go/examples/nats-bench@v1.55.0
bench=$(go env GOPATH)/bin/nats-bench
/tmp/pslab-bench broker stop nats >/dev/null 2>&1 || true
taskset -c "$brokers" /tmp/pslab-bench broker start nats >/tmp/pslab-nats.state
trap '/tmp/pslab-bench broker stop nats >/dev/null 2>&1 || true' EXIT
pw=$(awk '/^password/{print $2}' /tmp/pslab-nats.state)
pid=$(awk '/running, pid/{print $4}' /tmp/pslab-nats.state)
echo "nats-server pid $pid on CPUs $(taskset -c -p "$pid" | awk '{print $NF}'); load clients on CPUs $clients"
url="nats://pslab:${pw}@127.0.0.1:4222"
: >"$out/raw.txt"
start=$(date +%s)
n=4000000
for i in $(seq 1 "$rounds"); do
  # nats-bench: 4 M messages of 100 B; its CPU time (user+system) from time(1).
  nbout=$(taskset -c "$clients" /usr/bin/time -f 'cpu_s %U %S' "$bench" -s "$url" -np 1 -ns 1 -n "$n" -ms 100 pslab.bench 2>&1)
  nb=$(awk '/^ Sub stats/{gsub(",","",$3); print $3}' <<<"$nbout")
  nbcpu=$(awk -v n="$n" '/^cpu_s/{printf "%.3f", ($2+$3)*1e6/n}' <<<"$nbout")
  # pslab, default settings: a 10 s window after a 2 s warm-up (case 01,
  # core NATS unshaped: bounded by TCP backpressure like nats-bench), and
  # with the 1024-message PING/PONG window the other brokers keep (case 02). CPU µs
  # per message: its client CPU over the window / messages delivered in it.
  rm -rf /tmp/pslab-bench-run
  /tmp/pslab-bench run scenarios/bench-1-1-100.yaml --reps 1 --url "nats=$url" --out /tmp/pslab-bench-run >/dev/null 2>&1
  ps=$(python3 - "$clients" <<'PY'
import json, sys
recs = {r["case"]: r for r in map(json.loads, open("/tmp/pslab-bench-run/records.jsonl"))}
out = []
for c in ("01", "02"):
    r = recs[c]
    cpus = r["resources"].get("client_cpus", "")
    if cpus != sys.argv[1]:
        sys.exit(f"case {c}: pslab's clients ran on CPUs {cpus!r}, not {sys.argv[1]!r}")
    tput = r["result"]["sub_tput"]
    out += [str(round(tput)), f'{r["resources"]["client_cpu_pct"] / 100 * 1e6 / tput:.3f}']
print(" ".join(out))
PY
)
  # The bytes one message of case 01 puts on the wire (PUB frame), as
  # pslab's NATS driver frames it on the case's own subject.
  frame=$(/tmp/pslab-bench bundle frames /tmp/pslab-bench-run | awk '$1 == "01" {print $4}')
  ps="$ps $frame"
  echo "round $i nats-bench_sub,cpu_us $nb $nbcpu pslab_default_sub,cpu_us,tcp_bounded_sub,cpu_us,pub_frame_bytes $ps" | tee -a "$out/raw.txt"
done
python3 - "$out" "$rounds" "$(( $(date +%s) - start ))" "$clients" "$brokers" <<'PY'
import statistics, sys
out, rounds, wall, clients, brokers = sys.argv[1:6]
cols = {"nb": ([], []), "dflt": ([], []), "wide": ([], [])}
frames = set()
for line in open(f"{out}/raw.txt"):
    f = line.split()
    for key, i in (("nb", 3), ("dflt", 6), ("wide", 8)):
        cols[key][0].append(float(f[i])); cols[key][1].append(float(f[i + 1]))
    frames.add(f[10])
# nats-bench's PUB frame: "PUB pslab.bench 100\r\n", the body and CRLF.
nb_frame = len("PUB pslab.bench 100\r\n") + 100 + 2
m = statistics.mean
nb = m(cols["nb"][0])
def row(name, key):
    t, c = cols[key]
    return f"| {name} | {m(t):,.0f} | {min(t):,.0f} | {max(t):,.0f} | {m(t)/nb:.2f} | {m(c):.2f} |"
text = f"""# pslab vs nats-bench, 1 publisher / 1 subscriber / 100 B, core NATS, loopback

Same nats-server (pslab's embedded nats-server, `pslab broker start nats`),
same machine, {rounds} interleaved rounds. The server on CPU(s) {brokers}, both load
clients on CPU(s) {clients} (pslab's default CPU plan). Made by
`bash scripts/compare-nats-bench.sh` (wall time {wall} s).

| tool | subscriber msgs/s, mean | min | max | / nats-bench | client CPU µs per delivered msg |
|---|---:|---:|---:|---:|---:|
{row("nats-bench (nats.go v1.55.0 example)", "nb")}
{row("pslab, default settings: core NATS unshaped, bounded by TCP backpressure like nats-bench (case 01)", "dflt")}
{row("pslab, publish window 1024 messages, pipelined PING/PONG (case 02)", "wide")}

About the same bytes on the wire per message: nats-bench's PUB frames on
`pslab.bench` are {nb_frame} B, pslab's on its case's subject
{", ".join(sorted(frames))} B (`pslab bundle frames`; the NATS driver
hashes the case's prefix into a short first token, since the subject
travels with every message).

Client CPU per delivered message: nats-bench's user+system time (time(1))
over the {4_000_000:,} messages it delivers; pslab's client CPU over the
window over the messages delivered in it. Both processes publish and
subscribe. nats-bench's publisher is bounded only by TCP backpressure and
its subscriber only counts; pslab stamps and fully decodes every body
(CRC-32C and content check), counts sequence numbers and records each
latency. By default its core NATS publisher on an unshaped path is bounded
by TCP backpressure, as nats-bench's (a window of 100 000 messages that the
socket buffers bind first; a subscriber slower than the publisher makes the
server drop, counted as lost: core NATS is at-most-once); case 02 keeps the
1024-message window with pipelined PING/PONG round trips that JetStream and
STOMP keep (docs/design.md, Flow control). Latency of case 01 includes the
socket-buffer queue.
Raw rounds: raw.txt.
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
