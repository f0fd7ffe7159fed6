#!/usr/bin/env bash
# Side-by-side: pslab's MQTT client versus mqtt-benchmark (a public Go MQTT
# load tool, github.com/krylovsk/mqtt-benchmark v0.2.0 on paho.mqtt.golang
# v1.4.1), against the same Mosquitto (`pslab broker start mosquitto` on
# loopback, persistence off), 1 publisher, 100 B, interleaved rounds so both
# see the same machine state. Clients on CLIENT_CPUS (0), the broker on
# BROKER_CPUS (1): pslab's default CPU plan on 2 cores. Mosquitto,
# mqtt-benchmark and pslab's benchmark are started under taskset; `pslab
# run` pins itself (checked in its record). Run it alone on the machine
# (under the lab's lock where there is one).
#
# Like for like: mqtt-benchmark only publishes (one message at a time: it
# waits for each PUBLISH's token, the PUBACK at QoS 1, the write at QoS 0)
# and nobody subscribes. pslab's side of that comparison is
# BenchmarkPublishOnly (internal/mqtt): its publisher alone, the code path
# of every run (stamped body, Publish, Flush), nobody subscribing, at QoS 0
# with its window and at QoS 1 both one send at a time and with its window.
# Both: confirmed publishes per second and the client process's CPU time
# (user + system) per confirmed publish. For context, a round also runs
# `pslab run scenarios/bench-mqtt.yaml`: the full lab, one publisher and
# one subscriber in one process, every message stamped, delivered, decoded
# and audited (its CPU covers both ends).
#
# MQTT_BENCH=/path/to/mqtt-benchmark (required): the module proxy does not
# serve mqtt-benchmark; build v0.2.0 from its source with `go build`.
# Writes results/mqtt-bench/ (README.md, raw.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
clients=${CLIENT_CPUS:-0}
brokers=${BROKER_CPUS:-1}
out=${OUT:-results/mqtt-bench}
n=${COUNT:-200000}
bench=${MQTT_BENCH:?set MQTT_BENCH to an mqtt-benchmark v0.2.0 binary (github.com/krylovsk/mqtt-benchmark, built with go build)}
mkdir -p "$out"
go build -o /tmp/pslab-bench ./cmd/pslab
go test -c -o /tmp/pslab-mqtt.test ./internal/mqtt
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
  line="round=$i"
  # mqtt-benchmark: n messages of 100 B on one client; its CPU time from time(1).
  for q in 0 1; do
    mbout=$(taskset -c "$clients" /usr/bin/time -f 'cpu_s %U %S' "$bench" -broker tcp://127.0.0.1:1883 \
      -username pslab -password "$pw" -clients 1 -count "$n" -qos "$q" -size 100 -message-interval 0 \
      -topic p1234567/t0 -quiet 2>&1)
    ok=$(awk '/^Total Ratio/{print $3}' <<<"$mbout")
    [ "$ok" = "1.000" ] || { echo "mqtt-benchmark QoS $q: success ratio $ok"; echo "$mbout"; exit 1; }
    mb=$(awk '/^Total Bandwidth/{printf "%.0f", $NF}' <<<"$mbout")
    mbcpu=$(awk -v n="$n" '/^cpu_s/{printf "%.3f", ($2+$3)*1e6/n}' <<<"$mbout")
    line="$line anchor_qos$q=$mb,$mbcpu"
  done
  # pslab's publisher alone (BenchmarkPublishOnly): n confirmed sends each.
  pb=$(PSLAB_MQTT_BENCH_URL="$url" taskset -c "$clients" /tmp/pslab-mqtt.test -test.run '^$' \
    -test.bench PublishOnly -test.benchtime "${n}x" -test.count 1 2>&1)
  for c in qos0-window qos1-stop-and-wait qos1-window; do
    v=$(awk -v c="BenchmarkPublishOnly/$c" '$1 ~ "^"c"(-[0-9]+)?$" {for (k = 1; k < NF; k++) {if ($(k+1) == "msgs/s") t = $k; if ($(k+1) == "cpu-µs/msg") u = $k}; printf "%.0f,%s", t, u}' <<<"$pb")
    [ -n "$v" ] || { echo "BenchmarkPublishOnly/$c: no result"; echo "$pb"; exit 1; }
    line="$line pslab_pub_${c//-/_}=$v"
  done
  # The full lab: pslab run, 1 publisher + 1 subscriber in one process.
  rm -rf /tmp/pslab-bench-run
  /tmp/pslab-bench run scenarios/bench-mqtt.yaml --reps 1 --url "mosquitto=$url" --out /tmp/pslab-bench-run >/dev/null 2>&1
  ps=$(python3 - "$clients" <<'PY'
import json, sys
recs = {r["case"]: r for r in map(json.loads, open("/tmp/pslab-bench-run/records.jsonl"))}
out = []
for c, name in (("01", "qos0_window"), ("02", "qos1_window"), ("03", "qos1_stop_and_wait")):
    r = recs[c]
    cpus = r["resources"].get("client_cpus", "")
    if cpus != sys.argv[1]:
        sys.exit(f"case {c}: pslab's clients ran on CPUs {cpus!r}, not {sys.argv[1]!r}")
    k = r["result"]["counts"]
    if k["lost"] or k["duplicated"]:
        sys.exit(f"case {c}: lost or duplicated deliveries")
    tput = r["result"]["sub_tput"]
    out.append(f'pslab_run_{name}={round(tput)},{r["resources"]["client_cpu_pct"] / 100 * 1e6 / tput:.3f}')
print(" ".join(out))
PY
)
  echo "$line $ps" | tee -a "$out/raw.txt"
done
python3 - "$out" "$rounds" "$(( $(date +%s) - start ))" "$clients" "$brokers" "$version" "$n" <<'PY'
import datetime, statistics, sys
out, rounds, wall, clients, brokers, version, n = sys.argv[1:8]
cols = {}
for line in open(f"{out}/raw.txt"):
    for kv in line.split()[1:]:
        k, v = kv.split("=")
        t, c = v.split(",")
        cols.setdefault(k, ([], []))
        cols[k][0].append(float(t)); cols[k][1].append(float(c))
med = statistics.median
def row(name, key, anchor):
    t, c = cols[key]
    at, ac = med(cols[anchor][0]), med(cols[anchor][1])
    return (f"| {name} | {med(t):,.0f} | {min(t):,.0f} – {max(t):,.0f} | {med(t)/at:.2f} "
            f"| {med(c):.2f} | {min(c):.2f} – {max(c):.2f} | {med(c)/ac:.2f} |")
def target():
    # Issue 34: at least 0.9x the anchor's throughput at no more client CPU
    # per confirmed message, judged on the medians of the like-for-like rows.
    lines = ["## Issue 34's target", "",
             "At least 0.9× mqtt-benchmark's throughput on the same Mosquitto at no more client CPU per "
             "confirmed message (medians over the rounds; the spread is in the tables above):", ""]
    for name, key, anchor in (("QoS 1, one send at a time against mqtt-benchmark QoS 1 (the same work: "
                               "each PUBLISH waits for its PUBACK)", "pslab_pub_qos1_stop_and_wait", "anchor_qos1"),
                              ("QoS 0, pslab's window against mqtt-benchmark QoS 0 (mqtt-benchmark waits for each "
                               "write, pslab confirms by PINGREQ every 256 sends: not the same work)",
                               "pslab_pub_qos0_window", "anchor_qos0")):
        rt = med(cols[key][0]) / med(cols[anchor][0])
        rc = med(cols[key][1]) / med(cols[anchor][1])
        ok = "met" if rt >= 0.9 and rc <= 1 else "missed"
        lines.append(f"- {name}: throughput ×{rt:.2f}, CPU per message ×{rc:.2f}: **{ok}**")
    return "\n".join(lines)
head = ("| client | msgs/s, median | min – max | / mqtt-benchmark | client CPU µs per message, median | min – max | / mqtt-benchmark |\n"
        "|---|---:|---:|---:|---:|---:|---:|")
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
text = f"""# pslab's MQTT client vs mqtt-benchmark, 1 publisher, 100 B, Mosquitto {version}, loopback

Same Mosquitto (`pslab broker start mosquitto`: pslab's settings,
persistence off), same machine (2 cores), {rounds} interleaved rounds of {int(n):,}
messages per client and row; the broker on CPU {brokers}, the load clients on
CPU {clients} (pslab's default CPU plan). Made by
`MQTT_BENCH=path/to/mqtt-benchmark ROUNDS={rounds} COUNT={n} bash scripts/compare-mqtt-bench.sh`
on {date} (wall time {wall} s). Builds: mqtt-benchmark v0.2.0
(github.com/krylovsk/mqtt-benchmark at its tag, paho.mqtt.golang v1.4.1),
pslab at the commit that added this file, both by Go 1.26.

## Publish only: like for like

mqtt-benchmark only publishes: one client, one message at a time (it waits
for each PUBLISH's token: at QoS 1 the PUBACK, at QoS 0 the write to the
socket), `-message-interval 0`, nobody subscribed. pslab's side is
BenchmarkPublishOnly (internal/mqtt/bench_test.go): pslab's publisher alone
on the code path of every run (the load engine's stamped 100 B body,
Publisher.Publish, Flush at the end), nobody subscribed. Rate: confirmed
publishes per second (mqtt-benchmark's `Total Bandwidth`; pslab: the sends
over the time from the first send to the last confirmation). CPU: the
client process's user + system time over its messages (mqtt-benchmark's
whole process, time(1); pslab's over the loop, getrusage).

{head}
{row("mqtt-benchmark, QoS 0", "anchor_qos0", "anchor_qos0")}
{row("pslab publisher, QoS 0, its window (a PINGREQ every 256 sends confirms them)", "pslab_pub_qos0_window", "anchor_qos0")}
{row("mqtt-benchmark, QoS 1 (waits for each PUBACK)", "anchor_qos1", "anchor_qos1")}
{row("pslab publisher, QoS 1, one send at a time (as mqtt-benchmark)", "pslab_pub_qos1_stop_and_wait", "anchor_qos1")}
{row("pslab publisher, QoS 1, its window (1024 unacknowledged sends)", "pslab_pub_qos1_window", "anchor_qos1")}

## The full lab, for context

`pslab run scenarios/bench-mqtt.yaml` with the same Mosquitto: one
publisher and one subscriber in one process, 10 s windows; rate: messages
delivered per second in the window; CPU: the client process's over the
window per delivered message, which covers both ends (publishing, and
receiving, decoding with CRC-32C and content check, counting, recording
the latency and at QoS 1 acknowledging every message). Every record lost
and duplicated nothing. The ratios compare it with mqtt-benchmark
publishing only, which does less than half that work.

{head}
{row("pslab run, QoS 0, its window (case 01)", "pslab_run_qos0_window", "anchor_qos0")}
{row("pslab run, QoS 1, its window (case 02)", "pslab_run_qos1_window", "anchor_qos1")}
{row("pslab run, QoS 1, one send at a time (case 03)", "pslab_run_qos1_stop_and_wait", "anchor_qos1")}

{target()}

Raw rounds: raw.txt (per row `msgs/s,cpu-µs-per-message`).
"""
open(f"{out}/README.md", "w").write(text)
print(text)
PY
