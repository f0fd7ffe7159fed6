#!/usr/bin/env bash
# Side-by-side: pslab's MQTT client versus mqtt-benchmark (a public Go MQTT
# load tool, github.com/krylovsk/mqtt-benchmark v0.2.0 on paho.mqtt.golang),
# against the same Mosquitto (`pslab broker start mosquitto` on loopback),
# 1 publisher / 100 B, interleaved rounds so both see the same machine
# state. Clients on CLIENT_CPUS (0), the broker on BROKER_CPUS (1): pslab's
# default CPU plan on 2 cores; Mosquitto and mqtt-benchmark are started
# under taskset, pslab pins itself (checked in its record).
#
# mqtt-benchmark publishes only, one message at a time (it waits for each
# PUBLISH's token: the PUBACK at QoS 1, the write at QoS 0); pslab publishes
# and subscribes in one process (scenarios/bench-mqtt.yaml: its publisher
# window, and one send at a time as mqtt-benchmark). Both rates are
# publishes confirmed per second; client CPU per message is each process's
# CPU time over the messages it published (pslab's also receives, decodes
# and accounts every message). Writes results/mqtt-bench/.
#
# MQTT_BENCH=/path/to/mqtt-benchmark uses a binary built elsewhere instead
# of `go install github.com/krylovsk/mqtt-benchmark@v0.2.0`.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
clients=${CLIENT_CPUS:-0}
brokers=${BROKER_CPUS:-1}
out=${OUT:-results/mqtt-bench}
n=${COUNT:-200000}
mkdir -p "$out"
go build -o /tmp/pslab-bench ./cmd/pslab
bench=${MQTT_BENCH:-}
if [ -z "$bench" ]; then
  GOFLAGS= go install github.com/krylovsk/mqtt-benchmark@v0.2.0
  bench=$(go env GOPATH)/bin/mqtt-benchmark
fi
/tmp/pslab-bench broker stop mosquitto >/dev/null 2>&1 || true
taskset -c "$brokers" /tmp/pslab-bench broker start mosquitto >/tmp/pslab-mosquitto.state
trap '/tmp/pslab-bench broker stop mosquitto >/dev/null 2>&1 || true' EXIT
pw=$(awk '/^password/{print $2}' /tmp/pslab-mosquitto.state)
pid=$(awk '/running, pid/{print $4}' /tmp/pslab-mosquitto.state)
version=$(/tmp/pslab-bench broker install mosquitto | awk '{print $2}')
echo "mosquitto $version pid $pid on CPUs $(taskset -c -p "$pid" | awk '{print $NF}'); load clients on CPUs $clients"
url="mqtt://pslab:${pw}@127.0.0.1:1883"
: >"$out/raw.txt"
start=$(date +%s)
for i in $(seq 1 "$rounds"); do
  line="round $i"
  for q in 0 1; do
    # mqtt-benchmark: n messages of 100 B on one client; its CPU time from time(1).
    mbout=$(taskset -c "$clients" /usr/bin/time -f 'cpu_s %U %S' "$bench" -broker tcp://127.0.0.1:1883 \
      -username pslab -password "$pw" -clients 1 -count "$n" -qos "$q" -size 100 -message-interval 0 \
      -topic p1234567/t0 -quiet 2>&1)
    mb=$(awk '/^Total Bandwidth/{print $NF}' <<<"$mbout")
    mbcpu=$(awk -v n="$n" '/^cpu_s/{printf "%.3f", ($2+$3)*1e6/n}' <<<"$mbout")
    line="$line mqtt-benchmark_qos${q}_msgs,cpu_us $mb $mbcpu"
  done
  rm -rf /tmp/pslab-bench-run
  /tmp/pslab-bench run scenarios/bench-mqtt.yaml --reps 1 --url "mosquitto=$url" --out /tmp/pslab-bench-run >/dev/null 2>&1
  ps=$(python3 - "$clients" <<'PY'
import json, sys
recs = {r["case"]: r for r in map(json.loads, open("/tmp/pslab-bench-run/records.jsonl"))}
out = []
for c in ("01", "02", "03"):
    r = recs[c]
    cpus = r["resources"].get("client_cpus", "")
    if cpus != sys.argv[1]:
        sys.exit(f"case {c}: pslab's clients ran on CPUs {cpus!r}, not {sys.argv[1]!r}")
    if r["result"]["counts"]["lost"] or r["result"]["counts"]["duplicated"]:
        sys.exit(f"case {c}: lost or duplicated deliveries")
    tput = r["result"]["pub_tput"]
    out += [str(round(tput)), f'{r["resources"]["client_cpu_pct"] / 100 * 1e6 / tput:.3f}']
print(" ".join(out))
PY
)
  echo "$line pslab_qos0,qos1,qos1_stop_and_wait_msgs,cpu_us $ps" | tee -a "$out/raw.txt"
done
python3 - "$out" "$rounds" "$(( $(date +%s) - start ))" "$clients" "$brokers" "$version" "$n" <<'PY'
import statistics, sys
out, rounds, wall, clients, brokers, version, n = sys.argv[1:8]
cols = {k: ([], []) for k in ("mb0", "mb1", "p0", "p1", "p1s")}
for line in open(f"{out}/raw.txt"):
    f = line.split()
    for key, i in (("mb0", 3), ("mb1", 6), ("p0", 9), ("p1", 11), ("p1s", 13)):
        cols[key][0].append(float(f[i])); cols[key][1].append(float(f[i + 1]))
m = statistics.mean
def row(name, key, anchor):
    t, c = cols[key]
    a = m(cols[anchor][0])
    ac = m(cols[anchor][1])
    return f"| {name} | {m(t):,.0f} | {min(t):,.0f} | {max(t):,.0f} | {m(t)/a:.2f} | {m(c):.2f} | {m(c)/ac:.2f} |"
text = f"""# pslab's MQTT client vs mqtt-benchmark, 1 publisher, 100 B, Mosquitto {version}, loopback

Same Mosquitto (`pslab broker start mosquitto`, pslab's settings), same
machine, {rounds} interleaved rounds; the broker on CPU(s) {brokers}, both load
clients on CPU(s) {clients} (pslab's default CPU plan). Made by
`bash scripts/compare-mqtt-bench.sh` (wall time {wall} s).

| tool | messages/s, mean | min | max | / mqtt-benchmark | client CPU µs per message | / mqtt-benchmark |
|---|---:|---:|---:|---:|---:|---:|
{row("mqtt-benchmark v0.2.0, QoS 0", "mb0", "mb0")}
{row("pslab, QoS 0 (non-persistent), default window (case 01)", "p0", "mb0")}
{row("mqtt-benchmark v0.2.0, QoS 1", "mb1", "mb1")}
{row("pslab, QoS 1 (persistent), default window (case 02)", "p1", "mb1")}
{row("pslab, QoS 1, one send at a time (case 03)", "p1s", "mb1")}

mqtt-benchmark (github.com/krylovsk/mqtt-benchmark v0.2.0, on
paho.mqtt.golang v1.4.1) publishes only, on one client, {int(n):,} messages
a round, one at a time: it waits for each PUBLISH's token (at QoS 1 the
PUBACK, at QoS 0 the write), `-message-interval 0`; its rate is what it
reports, its CPU time (user + system, time(1)) over those messages. pslab
runs one publisher and one subscriber in one process
(scenarios/bench-mqtt.yaml, 10 s windows): its rate is the publisher's
confirmed sends per second in the window, its CPU the client's over the
window per message published, which includes receiving, decoding (CRC-32C
and content check), counting and recording the latency of every message
(the subscriber's PUBACK at QoS 1 too): more work per message than the
anchor does. Case 01 and 02 keep pslab's default window (1024 unconfirmed
sends; QoS 0 confirmed by PINGRESP), case 03 one send at a time as
mqtt-benchmark. Every pslab record lost and duplicated nothing.
Raw rounds: raw.txt.
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
