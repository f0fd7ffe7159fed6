#!/usr/bin/env bash
# The Gaddah & Kunz reproduction in capacity mode (issue 31): sets 1 and 2
# (50 cases), NATS and Artemis, wireline and wifi-paper, one pslab build
# and one broker configuration. For every row (case x broker x network):
# its capacity (the highest offered load it sustains, open loop; a pilot
# search from the paper-mode reproduction's delivered rate, then counted
# searches to a 2 % resolution until Stein's rule gives a 95 % CI within
# +-5 %, 3 to 6 of them) with what bound it, then its latency at 25, 50
# and 80 % of it (3 to 10 runs each, until the CIs of mean and p99
# latency are within +-5 % or the machine's latency floor). Wireline runs
# alone; wifi-paper in 4 parallel labs (the scenario files' parallel: 4,
# as results/parallel-check-180 supports). docs/capacity.md says how and
# why; results/capacity-pilots holds the pilots that set the probe phases.
#
# Budget: about 16-28 hours of machine time on 2 cores, projected from
# the pilots by `pslab plan capacity-budget` (docs/capacity.md, "The
# capacity-mode reproduction": the estimate, what it rests on, and why
# the issue's 8 h needs more cores). It has not been run.
# Resumable: run it again and it continues (pslab capacity --resume; a
# kill or a reboot loses at most the probes in flight). pslab logs each
# part in $OUT/parts.log (start, wall time, exit code, pslab version,
# machine, command). Every part builds pslab from the checkout
# (-buildvcs=true: records name the commit); a part built from another
# commit sets the other build's records aside and their rows start over,
# unless FORCE=1 (the rows then mix, and the tables say so): check out the
# commit of parts.log's first part to continue the same run.
#
# When every row is done: $OUT/*/CAPACITY.md, capacity.csv,
# capacity.json and plots/ per set, and $OUT/CAPACITY.md over both.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/gaddah-kunz-capacity}
mkdir -p "$out"
pslab=/tmp/pslab-reproduce-capacity
go build -buildvcs=true -o "$pslab" ./cmd/pslab
# Probe phases: 1 s warm-up, 3 s window, drain up to 2 s over the
# wireline; 5 s, 20 s, 10 s over wifi-paper (docs/capacity.md sizes them
# from the pilots).
flags=(--broker nats,artemis --network wireline,wifi-paper
  --prior results/gaddah-kunz-repro/gaddah-kunz-set1 --prior results/gaddah-kunz-repro/gaddah-kunz-set2
  --resolution 2% --target 5% --reps 3 --max-reps 6
  --loads 25,50,80 --latency-reps 3 --latency-max-reps 10
  --latency-bound wireline=250ms,wifi-paper=5s
  --phases wireline=1s/3s/2s,wifi-paper=5s/20s/10s)
if [ -f "$out/run.json" ]; then
  cmd=("$pslab" capacity --resume "$out")
  [ "${FORCE:-}" = 1 ] && cmd+=(--force)
else
  cmd=("$pslab" capacity scenarios/gaddah-kunz-set1.yaml scenarios/gaddah-kunz-set2.yaml --out "$out" "${flags[@]}")
fi
rc=0
"${cmd[@]}" >>"$out/summary.txt" 2>>"$out/progress.log" || rc=$?
[ -f "$out/parts.log" ] && tail -1 "$out/parts.log"
"$pslab" capacity table "$out"/gaddah-kunz-set1 "$out"/gaddah-kunz-set2 --out "$out/CAPACITY.md" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
  echo "not finished (exit $rc): run this script again to continue" >&2
  exit "$rc"
fi
