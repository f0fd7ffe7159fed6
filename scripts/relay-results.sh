#!/usr/bin/env bash
# The relay backend's committed results (issue 33), as root:
#   bash scripts/relay-results.sh            # bench, verify, compare
#   bash scripts/relay-results.sh bench      # results/relay-bench: highest rate, CPU at 1/10/50 Mbit/s, added RTT
#   bash scripts/relay-results.sh verify     # results/relay-verify: every relay profile verified from outside
#   bash scripts/relay-results.sh compare    # results/relay-vs-kernel: wifi-paper on the relay vs TBF + nftables
#   bash scripts/relay-results.sh haltpoll   # an experiment, not run by default: the added RTT with a guest
#                                            # that polls before halting (cpuidle haltpoll's guest_halt_poll_ns
#                                            # raised to 200000 and 50000 ns), the machine's value put back after
#   bash scripts/relay-results.sh dma-latency # an experiment, not run by default: the added RTT with and without
#                                            # /dev/cpu_dma_latency held at 0 (idle vCPUs poll, never halt), twice
#   bash scripts/relay-results.sh floor      # what any user-space relay costs here: pipe ping-pong, echoes
#                                            # without the engine (epoll, blocking, SO_BUSY_POLL, spinning)
# Each part measures: run it on a quiet machine (alone, or under the lock
# other measuring work takes). It writes the raw outputs; the README of each
# directory is written by hand from them.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("${@:-bench verify compare}")
parts=(${parts[*]})
go build -o /tmp/pslab-relay-results ./cmd/pslab
pslab=/tmp/pslab-relay-results
for part in "${parts[@]}"; do
  case $part in
  bench)
    mkdir -p results/relay-bench
    PSLAB_RELAY_BENCH=1 go test -count=1 -run TestRelayBenchmark -v ./netem | tee results/relay-bench/raw.txt
    ;;
  verify)
    mkdir -p results/relay-verify
    "$pslab" netem verify wifi-paper --duration 10s > results/relay-verify/wifi-paper-kernel.txt 2>&1 || true
    "$pslab" netem verify wifi-paper --backend relay --duration 10s > results/relay-verify/wifi-paper-relay.txt 2>&1 || true
    # wifi-paper-ge for 30 s: about 100 loss runs, the mean burst to +-8 %
    for p in wifi-paper-ge:30s wifi-paper-mac:10s wifi-good:10s wifi-poor:10s lte:10s 3g:10s satellite:10s cell-trace:10s wifi-bursty:10s; do
      "$pslab" netem verify "${p%%:*}" --duration "${p##*:}" > "results/relay-verify/${p%%:*}.txt" 2>&1 || true
    done
    ;;
  compare)
    out=results/relay-vs-kernel
    rm -rf "$out/kernel" "$out/relay"
    "$pslab" run scenarios/smoke.yaml --network wifi-paper --cases 01,03,05 --reps 3 --out "$out/kernel"
    "$pslab" run scenarios/smoke.yaml --network "$out/wifi-paper.yaml" --cases 01,03,05 --reps 3 --out "$out/relay"
    "$pslab" compare "$out/kernel" "$out/relay" --out "$out/compare.md"
    ;;
  haltpoll)
    # Changes a machine setting for the experiment's duration only and
    # puts the original back however the script ends.
    f=/sys/module/haltpoll/parameters/guest_halt_poll_ns
    [[ -w $f ]] || { echo "haltpoll: $f not writable (no cpuidle-haltpoll guest, or not root)" >&2; exit 2; }
    orig=$(cat "$f")
    trap 'echo "$orig" > "$f"; echo "guest_halt_poll_ns restored to $(cat "$f")"' EXIT
    for v in "$orig" 200000 50000; do
      echo "$v" > "$f"
      echo "=== guest_halt_poll_ns=$(cat "$f")"
      PSLAB_RELAY_BENCH=rtt go test -count=1 -run 'TestRelayBenchmark$' -v ./netem
    done | tee results/relay-bench/raw-haltpoll.txt
    ;;
  dma-latency)
    # Holds a PM QoS request of 0 us (the idle governor then keeps idle
    # vCPUs in their polling state) for the held rounds only; the request
    # ends when the holder exits.
    for round in 1 2; do
      echo "=== round $round: cpu_dma_latency untouched"
      PSLAB_RELAY_BENCH=rtt go test -count=1 -run 'TestRelayBenchmark$' -v ./netem
      echo "=== round $round: cpu_dma_latency held at 0"
      python3 -c "import os,struct,time; fd=os.open('/dev/cpu_dma_latency',os.O_WRONLY); os.write(fd,struct.pack('i',0)); time.sleep(900)" &
      holder=$!
      sleep 1
      PSLAB_RELAY_BENCH=rtt go test -count=1 -run 'TestRelayBenchmark$' -v ./netem || { kill $holder; exit 1; }
      kill $holder
    done | tee results/relay-bench/raw-cpu-dma-latency.txt
    ;;
  floor)
    PSLAB_RELAY_FLOOR=1 go test -count=1 -run 'TestRelayFloor$' -v -timeout 15m ./netem | tee results/relay-bench/raw-floor.txt
    ;;
  *) echo "unknown part $part (bench, verify, compare, haltpoll, dma-latency, floor)" >&2; exit 2 ;;
  esac
done
