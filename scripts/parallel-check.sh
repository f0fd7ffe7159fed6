#!/usr/bin/env bash
# Parallel labs against a lab alone (issue 16, item 3): the rows of
# scenarios/parallel-check.yaml once in one lab, once in 4 labs at once,
# then `pslab compare` of the two (ratio B/A = parallel/alone per row,
# Welch's t on logs, TOST within +-10 %). As root; 41 minutes here.
# Writes results/parallel-check/{alone,parallel}/, compare.md, compare.csv,
# compare.png/.svg and README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/compare-lib.sh
out=${OUT:-results/parallel-check}
labs=${LABS:-4}
seed=${SEED:-1}
go build -o /tmp/pslab-parallel-check ./cmd/pslab
pslab=/tmp/pslab-parallel-check
rm -rf "$out/alone" "$out/parallel"
mkdir -p "$out"
t0=$(date +%s)
# A failed run stops the script (pipefail); the grep only thins the output.
$pslab run scenarios/parallel-check.yaml --seed "$seed" --out "$out/alone" 2>&1 | tee "$out/alone.log" | { grep -E '^\[|wall time' || true; }
t1=$(date +%s)
$pslab run scenarios/parallel-check.yaml --seed "$seed" --parallel "$labs" --out "$out/parallel" 2>&1 | tee "$out/parallel.log" | { grep -E '^\[|wall time' || true; }
t2=$(date +%s)
compare_rows "$pslab" "$out/alone" "$out/parallel" "$out"
{
  echo "# Parallel labs against a lab alone"
  echo
  echo "Four wifi-paper case rows of Gaddah & Kunz set 1 (scenarios/parallel-check.yaml:"
  echo "100 B bodies, 5 s warm-up, 30 s window, up to 15 s drain, 3 repetitions) on"
  echo "NATS and Artemis, run in one lab (alone/) and in $labs labs at once"
  echo "(parallel/, \`--parallel $labs\`: each lab its own namespaces, router, link and"
  echo "broker instance), on $(nproc) cores, $(date -u +%Y-%m-%d)."
  echo
  echo "Made by \`bash scripts/parallel-check.sh\`: alone $((t1 - t0)) s, parallel $((t2 - t1)) s."
  echo
  compare_legend
  echo
  cat "$out/compare.md"
} >"$out/README.md"
cat "$out/README.md"
