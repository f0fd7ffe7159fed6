#!/usr/bin/env bash
# Parallel labs against a lab alone at the reproduction's own settings
# (issue 16, item 3): a few wifi-paper rows of set 1 run alone (one lab,
# the scenario file's 5 s / 180 s / 15 s phases, 3 repetitions) and are
# compared with the same rows of the reproduction, which ran them in 4 labs
# at once (`pslab compare`, B/A = parallel/alone per row: Welch's t on
# logs, TOST within +-10 %). scripts/parallel-check.sh did this at 30 s
# windows, too short for the 1/1/1 rows to say anything.
#
# Run it after the reproduction's set 1 wifi-paper rows (it compares with
# $REPRO). As root; about 25 minutes per case and broker on 2 cores
# (3 x ~230 s). Resumable: run it again to continue. Writes
# $OUT/alone/, compare.md, compare.csv, compare.png/.svg and README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
repro=${REPRO:-results/gaddah-kunz-repro/gaddah-kunz-set1}
out=${OUT:-results/parallel-check-180}
cases=${CASES:-01,03,19}
brokers=${BROKERS:-nats,artemis}
reps=${REPS:-3}
pslab=/tmp/pslab-parallel-check-180
go build -buildvcs=true -o "$pslab" ./cmd/pslab
mkdir -p "$out"
if [ -f "$out/alone/run.json" ]; then
  cmd=("$pslab" run --resume "$out/alone")
  [ "${FORCE:-}" = 1 ] && cmd+=(--force)
else
  cmd=("$pslab" run scenarios/gaddah-kunz-set1.yaml --cases "$cases" --broker "$brokers"
    --network wifi-paper --parallel 1 --reps "$reps" --max-reps "$reps" --out "$out/alone")
fi
t0=$(date +%s)
"${cmd[@]}" 2>&1 | tee -a "$out/alone.log" | { grep -E '^\[|wall time' || true; }
t1=$(date +%s)
echo "part: $(date -u +%Y-%m-%dT%H:%M:%SZ), $((t1 - t0)) s, pslab $("$pslab" version 2>/dev/null | head -1), $(hostname), $(nproc) cores, command: pslab ${cmd[*]:1}" >>"$out/parts.log"
compare_rows "$pslab" "$out/alone" "$repro" "$out"
{
  echo "# Parallel labs against a lab alone, at the reproduction's 180 s window"
  echo
  echo "Set 1 cases $cases over wifi-paper on $brokers: A = one lab alone"
  echo "(alone/, $reps repetitions, the scenario file's phases: 5 s warm-up, 180 s"
  echo "window, up to 15 s drain), B = the same rows of the reproduction ($repro),"
  echo "which ran them in 4 labs at once (each record's settings.concurrent_labs)."
  echo
  echo "Made by \`bash scripts/parallel-check-180.sh\`; parts.log says when, how long"
  echo "and with which pslab."
  echo
  compare_legend
  echo
  cat "$out/compare.md"
} >"$out/README.md"
cat "$out/README.md"
