#!/usr/bin/env bash
# The link study of issue 33 (item 7), results/link-study, as root:
#   bash scripts/link-study.sh                 # every part, then the report and plots
#   bash scripts/link-study.sh loss            # wifi-paper-relay and wifi-paper-ge (Bernoulli against bursty loss)
#   bash scripts/link-study.sh delay           # lte and satellite
#   bash scripts/link-study.sh retries         # wifi-paper-mac and wifi-poor (802.11 frame errors retried: independent and bursty)
#   bash scripts/link-study.sh 3g              # 3g
#   bash scripts/link-study.sh kernel          # wifi-paper on TBF + nftables
#   bash scripts/link-study.sh cell-trace      # pslab netem verify cell-trace: its 2 s queue against 500 ms, twice each
#   bash scripts/link-study.sh report          # pslab report (md, html) and pslab plot over the parts present
#   bash scripts/link-study.sh smoke           # scenarios/smoke.yaml over each relay profile, 2 labs, into $out/smoke/<profile>
#   bash scripts/link-study.sh smoke-report    # pslab report (md, csv), plots, link bounds and wall-time splits of smoke/
# Each measuring part takes 5-12 minutes of a quiet machine (run it alone, or
# under the lock other measuring work takes); scenarios/link-study.yaml holds
# the cases and settings. The README is written by hand from the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("${@:-loss delay retries 3g kernel cell-trace report}")
parts=(${parts[*]})
out=results/link-study
go build -o /tmp/pslab-link-study ./cmd/pslab
pslab=/tmp/pslab-link-study
run() { # run NAME NETWORKS: one part of the study into $out/NAME, timed
  local name=$1 networks=$2 t0=$SECONDS
  rm -rf "${out:?}/$name"
  # A lab name of its own: the parallel labs' broker instances (lstudyp1..4)
  # are then the study's, not shared with other runs of the default lab
  # name, which can leave an Artemis instance configured differently (a run
  # refuses labs whose brokers' configurations differ).
  "$pslab" run scenarios/link-study.yaml --network "$networks" --lab "${LAB:-lstudy}" --out "$out/$name"
  echo "$name: $((SECONDS - t0)) s of wall time" | tee -a "$out/wall-time.txt"
}
for part in "${parts[@]}"; do
  case $part in
  loss) run loss "$out/wifi-paper-relay.yaml,wifi-paper-ge" ;;
  delay) run delay lte,satellite ;;
  retries) run retries wifi-paper-mac,wifi-poor ;;
  3g) run 3g 3g ;;
  kernel) run kernel wifi-paper ;;
  cell-trace) # cell-trace's 2 s queue and the 500 ms it had before, twice each
    for i in 1 2; do
      "$pslab" netem verify cell-trace --duration 10s > "$out/verify-cell-trace-2s-$i.txt" 2>&1 || true
      "$pslab" netem verify "$out/cell-trace-500ms.yaml" --duration 10s > "$out/verify-cell-trace-500ms-$i.txt" 2>&1 || true
    done
    ;;
  report)
    dirs=()
    for d in kernel loss delay retries 3g; do [[ -f $out/$d/records.jsonl ]] && dirs+=("$out/$d"); done
    "$pslab" report "${dirs[@]}" --out "$out/REPORT.md"
    "$pslab" report "${dirs[@]}" --format html --out "$out/REPORT.html"
    "$pslab" report "${dirs[@]}" --format csv --out "$out/rows.csv"
    rm -rf "$out/plots"
    "$pslab" plot "${dirs[@]}" --figure all --out "$out/plots"
    ;;
  smoke) # the smoke suite over each relay profile: one run per profile, so a
    # profile whose lab cannot be set up (verification) leaves the others whole
    mkdir -p "$out/smoke"
    for net in ${SMOKE_NETWORKS:-wifi-paper-mac satellite wifi-poor lte cell-trace 3g wifi-good wifi-paper-ge}; do
      d=$out/smoke/$net t0=$SECONDS rc=0
      rm -rf "${d:?}"
      mkdir -p "$d"
      "$pslab" run scenarios/smoke.yaml --network "$net" --parallel 2 --lab "${LAB:-lkst}" --out "$d" \
        >"$d/summary.txt" 2>"$d/progress.log" || rc=$?
      echo "$net: start $(date -u -d "-$((SECONDS - t0)) seconds" +%Y-%m-%dT%H:%M:%SZ), $((SECONDS - t0)) s of wall time, exit $rc" | tee -a "$out/smoke/wall-time.txt"
    done
    ;;
  smoke-report)
    dirs=()
    for d in "$out"/smoke/*/; do [[ -f $d/records.jsonl ]] && dirs+=("${d%/}"); done
    "$pslab" report "${dirs[@]}" --out "$out/smoke/REPORT.md"
    "$pslab" report "${dirs[@]}" --format csv --out "$out/smoke/rows.csv"
    rm -rf "$out/smoke/plots"
    "$pslab" plot "${dirs[@]}" --figure all --out "$out/smoke/plots"
    for d in "${dirs[@]}"; do
      "$pslab" bundle link-bound "$d" >"$d/link-bound.txt" 2>&1 || true # NATS rows; it stops at Artemis's frames
      "$pslab" bundle wall-time "$d" >"$d/wall-time-split.md"
    done
    ;;
  *) echo "unknown part $part (loss, delay, retries, 3g, kernel, cell-trace, report, smoke, smoke-report)" >&2; exit 2 ;;
  esac
done
