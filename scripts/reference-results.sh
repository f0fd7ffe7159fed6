#!/usr/bin/env bash
# Regenerates the committed reference results under results/ (as root, on a
# quiet machine: every number is a measurement of this machine). Each part
# writes its bundle, the summary table, and a README with the command and
# its wall time. Usage (as root): bash scripts/reference-results.sh [part...]
# Parts: smoke scale-400 wifi-link-bound netem-verify (default: all), and
# gaddah-kunz-quick (not in the default: about 25 minutes), henjes (Henjes
# et al.'s filter and capacity experiments on both brokers with the model
# fits: about 15 minutes), faults (the fault study on both brokers and
# networks: about 20 minutes), soak (31 minutes) and sweep-nats (a sweep
# over two factors on NATS: about 3 minutes); over MQTT
# (MQTT_BROKERS, default mosquitto,nats-mqtt,artemis-mqtt): mqtt-smoke,
# mqtt-gaddah-kunz-quick, mqtt-faults, and mqtt-vs-native (NATS and Artemis
# against their MQTT listeners over wifi-paper). The Gaddah & Kunz
# reproduction itself (results/gaddah-kunz-repro, REPORT.md and plots) is
# scripts/reproduce.sh: about 20 hours on 2 cores, resumable.
set -euo pipefail
cd "$(dirname "$0")/.."
# PSLAB_LAB=NAME runs a part in its own lab (namespaces and Artemis
# instance), so that two parts can run at once; it does not change results.
pslab=/tmp/pslab-ref${PSLAB_LAB:+-$PSLAB_LAB}
go build -o "$pslab" ./cmd/pslab
lab=${PSLAB_LAB:+--lab $PSLAB_LAB}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(smoke scale-400 wifi-link-bound netem-verify)

# run_part NAME DESCRIPTION COMMAND...: runs the command, keeps its output
# and writes results/NAME/README.md.
run_part() {
  local name=$1 desc=$2; shift 2
  local dir=results/$name
  rm -rf "$dir"; mkdir -p "$dir"
  local start; start=$(date +%s)
  "$@" >"$dir/summary.txt" 2>"$dir/progress.log" || echo "(exit code $?)" >>"$dir/summary.txt"
  local wall=$(( $(date +%s) - start ))
  {
    echo "# $name"
    echo
    echo "$desc"
    echo
    echo "Command (from the repository root, as root):"
    echo
    echo '```'
    echo "pslab ${*:2}" | sed "s|$pslab|pslab|; s| --lab [a-z0-9]*||"
    echo '```'
    echo
    echo "Wall time: ${wall} s. Machine: $(nproc) cores, kernel $(uname -r), $(date -u +%Y-%m-%d)."
    echo "Regenerate: \`bash scripts/reference-results.sh $name\`."
    echo
    echo "Summary (records in records.jsonl, progress in progress.log):"
    echo
    echo '```'
    cat "$dir/summary.txt"
    echo '```'
  } >"$dir/README.md"
  echo "$name: ${wall} s"
}

# The MQTT brokers of the mqtt-* parts (docs/mqtt.md).
mqtt_brokers=${MQTT_BROKERS:-mosquitto,nats-mqtt,artemis-mqtt}

for part in "${parts[@]}"; do
  case $part in
  mqtt-smoke)
    run_part mqtt-smoke "The smoke suite over MQTT ($mqtt_brokers): the four subscription x delivery combinations at 1/1/1, 100 B (QoS 0 and 1, clean and persistent sessions); case 05 (non-persistent with dups-ok) is refused over MQTT and left out with the reason (docs/mqtt.md); wireline and wifi-paper." \
      $pslab run scenarios/smoke.yaml --broker "$mqtt_brokers" --skip-unsupported --out results/mqtt-smoke ;;
  mqtt-gaddah-kunz-quick)
    run_part mqtt-gaddah-kunz-quick "The 50 cases of Gaddah & Kunz over MQTT ($mqtt_brokers) in QUICK mode (300 ms warm-up, 1 s window, 2 s drain, 1 repetition, the 200+-connection cases at a tenth of their clients), wireline and wifi-paper: the pipeline end to end, not a reproduction. The cases MQTT cannot express (non-persistent with dups-ok) are left out with the reason (docs/mqtt.md has the table)." \
      $pslab run scenarios/gaddah-kunz-set1.yaml scenarios/gaddah-kunz-set2.yaml --broker "$mqtt_brokers" --skip-unsupported --quick --reps 1 --out results/mqtt-gaddah-kunz-quick
    $pslab report results/mqtt-gaddah-kunz-quick/gaddah-kunz-set1 results/mqtt-gaddah-kunz-quick/gaddah-kunz-set2 --out results/mqtt-gaddah-kunz-quick/REPORT.md ;;
  mqtt-vs-native)
    run_part mqtt-vs-native "A broker's own protocol against MQTT on the same broker over wifi-paper (1 Mbit/s half duplex, 3 % loss): NATS against nats-mqtt, Artemis over STOMP against artemis-mqtt; smoke cases 01-04 (1/1/1 100 B, each subscription x delivery), 5 repetitions in 4 labs. COMPARE.md is \`pslab compare --pair\` (ratio MQTT / native per case, with its 95 % CI), compare.png draws it." \
      $pslab run scenarios/smoke.yaml --broker nats,nats-mqtt,artemis,artemis-mqtt --network wifi-paper --reps 5 --parallel 4 --skip-unsupported --out results/mqtt-vs-native/run $lab
    $pslab compare results/mqtt-vs-native/run results/mqtt-vs-native/run --pair nats=nats-mqtt --pair artemis=artemis-mqtt \
      --out results/mqtt-vs-native/COMPARE.md --plot results/mqtt-vs-native ;;
  mqtt-faults)
    run_part mqtt-faults "The fault study over MQTT ($mqtt_brokers): link outage, loss steps, subscriber disconnect, broker restart per subscription x delivery (QoS 0/1, clean/persistent session), DUPS_OK and CLIENT across a restart, and QoS 2 (exactly-once) across an outage, a disconnect and a restart; wireline and wifi-paper; REPORT.md has the delivery audit against MQTT's promises by QoS (docs/mqtt.md)." \
      $pslab run scenarios/faults.yaml scenarios/faults-qos2.yaml --broker "$mqtt_brokers" --network wifi-paper,wireline --parallel 4 --out results/mqtt-faults $lab
    $pslab report results/mqtt-faults/faults results/mqtt-faults/faults-qos2 --out results/mqtt-faults/REPORT.md
    $pslab plot results/mqtt-faults/faults results/mqtt-faults/faults-qos2 --figure series,latency --out results/mqtt-faults/plots ;;
  smoke)
    run_part smoke "The smoke suite: the four subscription x delivery combinations at 1/1/1, 100 B, and a 2/10/2 few-to-many case with selector, dups-ok ack and 2 KB text bodies; NATS and Artemis; wireline and the emulated 802.11 link (wifi-paper)." \
      $pslab run scenarios/smoke.yaml --out results/smoke ;;
  scale-400)
    run_part scale-400 "400 publishers / 400 subscribers / 400 topics (800 connections), non-durable/non-persistent and durable/persistent, on NATS and Artemis, wireline. Peak RSS of client and broker are in each record (resources.client_peak_rss, resources.broker_peak_rss)." \
      $pslab run scenarios/scale-400.yaml --broker nats,artemis --out results/scale-400 ;;
  wifi-link-bound)
    run_part wifi-link-bound "NATS core, 1/1/1, 5120 B bodies over wifi-paper (1 Mbit/s half duplex, 3 % loss): is the subscriber throughput bound by the link? The bound is computed in results/wifi-link-bound/bound.txt from the verified goodput of the link and the bytes one message puts on it." \
      $pslab run scenarios/wifi-link-bound.yaml --out results/wifi-link-bound
    $pslab bundle link-bound results/wifi-link-bound | tee results/wifi-link-bound/bound.txt >>results/wifi-link-bound/README.md ;;
  netem-verify)
    run_part netem-verify "The wifi-paper profile verified over 10 s phases: TCP goodput and loss per direction against the profile." \
      $pslab netem verify wifi-paper --duration 10s ;;
  gaddah-kunz-quick)
    run_part gaddah-kunz-quick "All 50 cases of Gaddah & Kunz (sets 1 and 2) in QUICK mode: 300 ms warm-up, 1 s window, 2 s drain, 1 repetition, the 200+-connection cases at a tenth of their clients. It exercises the whole pipeline (both brokers, both networks, report, plots); its numbers are NOT the reproduction (short windows, no confidence intervals) and REPORT.md says so." \
      $pslab run scenarios/gaddah-kunz-set1.yaml scenarios/gaddah-kunz-set2.yaml --quick --reps 1 --out results/gaddah-kunz-quick
    $pslab report results/gaddah-kunz-quick/gaddah-kunz-set1 results/gaddah-kunz-quick/gaddah-kunz-set2 --out results/gaddah-kunz-quick/REPORT.md
    $pslab plot results/gaddah-kunz-quick/gaddah-kunz-set1 results/gaddah-kunz-quick/gaddah-kunz-set2 --out results/gaddah-kunz-quick/plots ;;
  gaddah-kunz-set1 | gaddah-kunz-set2 | gaddah-kunz-report)
    # The scenario files now carry the reproduction's settings (180 s
    # wireless windows, repetitions until +-5 %): about 20 hours, resumable.
    # results/gaddah-kunz-set1 and -set2 are the first reproduction (3
    # repetitions of 4 s windows, old accounting), kept as the records
    # docs/report.md derived those settings from.
    echo "$part: the reproduction is bash scripts/reproduce.sh (results/gaddah-kunz-repro)" >&2
    exit 2 ;;
  faults)
    run_part faults "The fault study (scenarios/faults.yaml): link outage, loss steps, subscriber disconnect and broker restart during the window, per subscription x delivery (and DUPS_OK / CLIENT across a restart); NATS and Artemis; wireline and wifi-paper. REPORT.md has the delivery audit (promised versus observed); plots/series-* shade the faults." \
      $pslab run scenarios/faults.yaml --out results/faults $lab
    $pslab report results/faults --out results/faults/REPORT.md
    $pslab plot results/faults --figure series,latency --out results/faults/plots ;;
  soak)
    run_part soak "The soak (scenarios/soak.yaml): 30 minutes of 100/100/100 at 1 msg/s per publisher over wifi-paper, a 20 s outage every 5 minutes, NATS. REPORT.md has the client's memory and goroutine trend; plots/resources-* draws it." \
      $pslab run scenarios/soak.yaml --out results/soak $lab
    $pslab report results/soak --out results/soak/REPORT.md
    $pslab plot results/soak --figure series,resources --out results/soak/plots ;;
  sweep-nats)
    run_part sweep-nats "A sweep over two factors on NATS over the wireline (issue 36): body size (100, 1024, 8192 B) x subscription (durable, non-durable) at 1/1/1, 3 repetitions of 4 s windows. Each record carries its case's varied values; REPORT.md labels the cases by them, and plots/sweep-* draws subscriber and publisher throughput and mean latency against each factor, a line per value of the other." \
      $pslab sweep --name sweep-nats --broker nats --network wireline --vary size=100,1024,8192 --vary subscription=durable,non-durable --set warmup=1s --set window=4s --set drain=2s --reps 3 --out results/sweep-nats $lab
    $pslab report results/sweep-nats --out results/sweep-nats/REPORT.md
    $pslab plot results/sweep-nats --figure sweep,latency --out results/sweep-nats/plots ;;
  henjes)
    run_part henjes "Henjes et al.'s filter and capacity experiments (papers 000, 001, 003; docs/filters.md) on NATS (subject filters) and Artemis (application property and correlation-id header filters), wireline: publishers, subscribers, message size, filter activation, topics, simple vs OR-filters, AND-filter order and the joint grid r x n additional filters (scenarios/henjes-*.yaml, 294 case runs at 0.5 s warm-up, 2 s window, 1 s drain); then the three service-time models fitted to the grid and activation runs (broker CPU per message, and capacity from the runs the capacity rule calls saturated) and the figures. REPORT.md has the costs per broker and filter kind in µs with the fit quality." \
      $pslab model measure --broker nats,artemis --out results/henjes ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
