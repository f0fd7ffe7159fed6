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
pslab=/tmp/pslab-machine-noise
go build -o "$pslab" ./cmd/pslab
{
  echo "# The machine's own run-to-run noise (CPU-bound, per core)"
  echo
  echo "openssl SHA-256 over 16 KiB blocks, $secs s per run, $runs runs per core, the"
  echo "cores in turn (taskset), nothing else running. Made by"
  echo "\`bash scripts/machine-noise.sh\` in $((t1 - t0)) s; raw rates in raw.txt."
  echo
  echo "| core | runs | mean kB/s | min | max | CV | repetitions for ±5 % at 95 % |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  for cpu in $(awk '{print $4}' "$out/raw.txt" | sort -un); do
    # count, mean, min, max, CV and repetitions, from pslab's own statistics
    awk -v c="$cpu" '$4 == c {print $6}' "$out/raw.txt" | "$pslab" plan noise --first 2 |
      awk -F'\t' -v c="$cpu" '
        function g(x,   s, r) { s = sprintf("%.0f", x); r = ""
          while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
          return s r }
        {cv = ($5 == "-") ? "-" : sprintf("%.2f %%", 100 * $5)
         printf "| %s | %s | %s | %s | %s | %s | %s |\n", c, $1, g($2), g($3), g($4), cv, $6}'
  done
} >"$out/README.md"
cat "$out/README.md"
