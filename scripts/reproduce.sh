#!/usr/bin/env bash
# The Gaddah & Kunz reproduction at the paper's statistical standard
# (issue 16): sets 1 and 2 (50 cases), NATS and Artemis, wireline and
# wifi-paper, with the scenario files' run settings (docs/report.md, "Run
# settings of the reproduction": each row repeated until the 95 % CIs of
# subscriber throughput and mean latency are within +-5 %, 3 to 10 times,
# in seeded random rounds; wireline 2 s / 5 s / up to 5 s, wifi-paper
# 5 s / 180 s / up to 15 s; wifi-paper in 4 parallel labs, wireline alone).
#
# Long: about 20 hours of machine time on 2 cores (the committed run:
# 21.7 h over 21 parts, with the repetitions it set aside). Resumable: run it again
# and it continues where it stopped (pslab run --resume; Ctrl-C, a kill or
# a reboot lose at most the case runs in flight). pslab logs each part in
# $OUT/parts.log (start, wall time, exit code, pslab version, machine; a
# part killed outright keeps "running (no end recorded)"), so a run split
# over sessions or machines says which part ran where. A part that stops
# early leaves $OUT/REPORT-partial.md (pslab report marks a report of an
# unfinished run PARTIAL); when every repetition is done it writes
# $OUT/REPORT.md and $OUT/plots.
#
# FORCE=1 passes --force to the resume: needed when pslab's version changed
# between parts (each record names the version it was made with).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/gaddah-kunz-repro}
pslab=/tmp/pslab-reproduce
setdirs=("$out"/gaddah-kunz-set1 "$out"/gaddah-kunz-set2)
# -buildvcs=true: records and parts.log name the commit pslab was built
# from, even where GOFLAGS turns VCS stamping off.
go build -buildvcs=true -o "$pslab" ./cmd/pslab
mkdir -p "$out"
if [ -f "$out/run.json" ]; then
  cmd=("$pslab" run --resume "$out")
  [ "${FORCE:-}" = 1 ] && cmd+=(--force)
else
  cmd=("$pslab" run scenarios/gaddah-kunz-set1.yaml scenarios/gaddah-kunz-set2.yaml --out "$out")
fi
rc=0
"${cmd[@]}" >>"$out/summary.txt" 2>>"$out/progress.log" || rc=$?
[ -f "$out/parts.log" ] && tail -1 "$out/parts.log"
if [ "$rc" -ne 0 ]; then
  # What has run so far, with the validity table, so that an unfinished
  # run can be read between parts (REPORT.md replaces it at the end).
  sets=()
  for s in "${setdirs[@]}"; do
    [ -s "$s/records.jsonl" ] && sets+=("$s")
  done
  if [ ${#sets[@]} -gt 0 ]; then
    "$pslab" report "${sets[@]}" --out "$out/REPORT-partial.md" || true
  fi
  echo "not finished (exit $rc): run this script again to continue" >&2
  exit "$rc"
fi
rm -f "$out/REPORT-partial.md"
"$pslab" report "${setdirs[@]}" --out "$out/REPORT.md"
"$pslab" plot "${setdirs[@]}" --out "$out/plots"
