#!/usr/bin/env bash
# What pslab's load client costs in CPU per delivered message at a fixed
# offered load, before and after a change of pslab (issue 31, item 7):
# scenarios/client-cost.yaml (core NATS 1/1/1 saturating and at 50,000
# msg/s, Artemis 1/1/1 at 2,000 msg/s; wireline, 100 B), run by two builds
# of pslab, ROUNDS rounds, each build once a round with the scenario's
# repetitions, the order alternating from round to round; each build's
# run holds the machine-wide lock on its own (LOCK). The numbers are
# pslab's own: `pslab bundle cpu` (the client's and broker's mean CPU over
# the window over the subscribers' throughput, per record, then the mean
# and 95 % CI per case), read with the AFTER build.
#   BEFORE, AFTER: git revisions (default: main and the working tree)
#   ROUNDS (default 2), OUT (default results/client-cost), LOCK
# Writes OUT/cpu-before.txt, OUT/cpu-after.txt (`pslab bundle cpu` of all
# rounds), OUT/records/BUILD-rN/ (the bundles as run) and OUT/builds.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${BEFORE:-main}
after=${AFTER:-}
rounds=${ROUNDS:-2}
out=${OUT:-results/client-cost}
lock=${LOCK:-/tmp/pslab-heavy.lock}
work=$(mktemp -d /tmp/client-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

# build REV DIR: pslab at git revision REV ("" = the working tree) into DIR/pslab
build() {
  mkdir -p "$2"
  if [ -z "$1" ]; then
    go build -o "$2/pslab" ./cmd/pslab
  else
    mkdir -p "$2/src"
    git archive "$1" | tar -x -C "$2/src"
    (cd "$2/src" && go build -o "$2/pslab" ./cmd/pslab)
  fi
}
build "$before" "$work/before"
build "$after" "$work/after"
mkdir -p "$out/records"
{
  echo "before: $before ($(git rev-parse --short "$before"))"
  if [ -z "$after" ]; then
    echo "after: the working tree of $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with changes not committed)')"
  else
    echo "after: $after ($(git rev-parse --short "$after"))"
  fi
  echo "go: $(go env GOVERSION); scenario: scenarios/client-cost.yaml; rounds: $rounds"
} >"$out/builds.txt"

t0=$(date +%s)
for i in $(seq 1 "$rounds"); do
  order="before after"
  [ $((i % 2)) -eq 0 ] && order="after before"
  for b in $order; do
    dir="$out/records/$b-r$i"
    rm -rf "$dir"
    echo "round $i of $rounds: $b" >&2
    flock "$lock" "$work/$b/pslab" run scenarios/client-cost.yaml --out "$dir" >"$work/$b-r$i.log" 2>&1 ||
      { echo "client-cost: the $b run of round $i failed:" >&2; tail -20 "$work/$b-r$i.log" >&2; exit 1; }
    el=$(( $(date +%s) - t0 ))
    done_runs=$(( 2 * (i - 1) + 1 + $( [ "$b" = "${order##* }" ] && echo 1 || echo 0 ) ))
    echo "  $el s elapsed, about $(( el * (2 * rounds - done_runs) / done_runs )) s left" >&2
  done
done
for b in before after; do
  "$work/after/pslab" bundle cpu "$out"/records/"$b"-r*/ >"$out/cpu-$b.txt"
done
echo "wall: $(( $(date +%s) - t0 )) s" >>"$out/builds.txt"
for b in before after; do
  echo "== $b"
  grep '^#' "$out/cpu-$b.txt"
done
