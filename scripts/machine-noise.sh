#!/usr/bin/env bash
# The machine's own between-run noise on a fixed CPU-bound workload, per
# core: openssl's SHA-256 over 16 KiB blocks for $SECONDS_PER_RUN s, $RUNS
# times on each core in turn (taskset), nothing else running. Reports each
# run's rate and, per core, the mean, the coefficient of variation and the
# repetitions that CV would need for a 95 % CI within +-5 % (n with
# t(0.975, n-1) * CV / sqrt(n) <= 5 %). It separates the CPU's own
# run-to-run variation from what a broker measurement adds (scheduling,
# the network stack, the JVM), for docs/report.md ("Run settings of the
# reproduction"). Needs the machine to itself. Writes $OUT/README.md and
# $OUT/raw.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/machine-noise}
runs=${RUNS:-10}
secs=${SECONDS_PER_RUN:-3}
mkdir -p "$out"
: >"$out/raw.txt"
t0=$(date +%s)
for r in $(seq 1 "$runs"); do
  for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
    # The last field of the sha256 line is kB/s over 16384-byte blocks.
    rate=$(taskset -c "$cpu" openssl speed -seconds "$secs" -bytes 16384 sha256 2>/dev/null |
      awk '/^sha256 /{v=$NF; sub(/k$/, "", v); print v}')
    [ -n "$rate" ] || { echo "machine-noise: openssl speed printed no sha256 rate" >&2; exit 1; }
    echo "run $r cpu $cpu sha256_16k_kBps $rate" >>"$out/raw.txt"
  done
done
t1=$(date +%s)
python3 - "$out/raw.txt" "$runs" "$secs" "$((t1 - t0))" >"$out/README.md" <<'EOF'
import importlib.util
import statistics as st
import sys
from collections import defaultdict

# The t quantiles, CV and repetition count of scripts/run-settings.py.
spec = importlib.util.spec_from_file_location("run_settings", "scripts/run-settings.py")
rs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rs)

path, runs, secs, wall = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
by = defaultdict(list)
for line in open(path):
    f = line.split()
    by[int(f[3])].append(float(f[5]))
print("# The machine's own run-to-run noise (CPU-bound, per core)")
print()
print(f"openssl SHA-256 over 16 KiB blocks, {secs} s per run, {runs} runs per core, the")
print("cores in turn (taskset), nothing else running. Made by")
print(f"`bash scripts/machine-noise.sh` in {wall} s; raw rates in raw.txt.")
print()
print("| core | runs | mean kB/s | min | max | CV | repetitions for ±5 % at 95 % |")
print("|---|---:|---:|---:|---:|---:|---:|")
for cpu, v in sorted(by.items()):
    cv = rs.cv(v)
    cvs = "-" if cv is None else f"{cv * 100:.2f} %"
    print(f"| {cpu} | {len(v)} | {st.mean(v):,.0f} | {min(v):,.0f} | {max(v):,.0f} | {cvs} | {'-' if cv is None else rs.reps_needed(cv, first=2)} |")
EOF
cat "$out/README.md"
