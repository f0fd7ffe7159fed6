#!/usr/bin/env bash
# Client CPU per delivered message at 10 %, 50 % and 100 % of saturation,
# core NATS 1/1/1 on the wireline with 100 B bodies: issue 31's target
# (item 7: at 10 % at most 2x the cost at saturation). The saturating
# case of scenarios/client-cost.yaml runs first; its mean subscriber
# msg/s is the saturation S, and the same case then runs open loop at
# 0.1 S and 0.5 S (the scenario written to OUT/scenario.yaml). One pslab
# build (the working tree), built before the machine-wide lock is taken;
# the lock is held once, for the measurement only. The numbers are
# `pslab bundle cpu` (client and broker CPU over the window / subscriber
# msg/s, per record; mean and 95 % CI per case).
#   REPS (default 5), OUT (default results/client-cost/fractions), LOCK;
#   TICKS: extra cases at 10 % with these pace_tick values, e.g. "3ms 5ms"
#   (more messages a wake-up: what the CPU per message and the latency
#   become; results/client-cost/README.md)
# Writes OUT/sat/ and OUT/fractions/ (the bundles), OUT/scenario.yaml,
# OUT/cpu.txt and OUT/build.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-5}
out=${OUT:-results/client-cost/fractions}
lock=${LOCK:-/tmp/pslab-heavy.lock}
work=$(mktemp -d /tmp/client-cost-fractions.XXXXXX)
trap 'rm -rf "$work"' EXIT

go build -o "$work/pslab" ./cmd/pslab
{
  echo "pslab: the working tree of $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with changes not committed)')"
  echo "go: $(go env GOVERSION); reps: $reps${TICKS:+; pace ticks at 10 %: $TICKS}"
} >"$work/build.txt"

exec 9>"$lock"
echo "client-cost-fractions: waiting for $lock" >&2
flock 9
t0=$(date +%s)
rm -rf "$out/sat" "$out/fractions"
mkdir -p "$out"
echo "saturating, $reps repetitions" >&2
"$work/pslab" run scenarios/client-cost.yaml --cases nats-sat --reps "$reps" --out "$out/sat" >"$work/sat.log" 2>&1 ||
  { tail -20 "$work/sat.log" >&2; exit 1; }
sat=$("$work/pslab" bundle cpu "$out/sat" | awk '$1 == "#" && $2 == "nats-sat" {print $NF}')
[ -n "$sat" ] || { echo "client-cost-fractions: no saturated throughput in $out/sat" >&2; exit 1; }
r10=$(awk -v s="$sat" 'BEGIN {printf "%d", 0.1 * s}')
r50=$(awk -v s="$sat" 'BEGIN {printf "%d", 0.5 * s}')
echo "saturation $sat msg/s: 10 % = $r10, 50 % = $r50 msg/s; $(( $(date +%s) - t0 )) s elapsed" >&2
# The saturating case's settings (scenarios/client-cost.yaml) at two rates.
cat >"$out/scenario.yaml" <<EOF
# Written by scripts/client-cost-fractions.sh: core NATS 1/1/1 open loop at
# 10 % and 50 % of the saturated throughput measured just before
# ($sat msg/s, OUT/sat), with the settings of scenarios/client-cost.yaml.
suite: client-cost-fractions
brokers: [nats]
networks: [wireline]
reps: $reps
defaults:
  publishers: 1
  subscribers: 1
  topics: 1
  subscription: non-durable
  delivery: non-persistent
  ack: auto
  body: bytes
  size: 100
  warmup: 2s
  window: 5s
  drain: 5s
cases:
  - id: nats-10pct
    name: core NATS 1/1/1, 10 % of saturation
    rate: $r10
  - id: nats-50pct
    name: core NATS 1/1/1, 50 % of saturation
    rate: $r50
EOF
for t in ${TICKS:-}; do
  cat >>"$out/scenario.yaml" <<EOF
  - id: nats-10pct-tick-$t
    name: core NATS 1/1/1, 10 % of saturation, pace_tick $t
    rate: $r10
    pace_tick: $t
EOF
done
echo "10 % and 50 %${TICKS:+ and 10 % at pace_tick $TICKS}, $reps repetitions each" >&2
"$work/pslab" run "$out/scenario.yaml" --out "$out/fractions" >"$work/fractions.log" 2>&1 ||
  { tail -20 "$work/fractions.log" >&2; exit 1; }
flock -u 9
"$work/pslab" bundle cpu "$out/sat" "$out/fractions" >"$out/cpu.txt"
echo "lock held: $(( $(date +%s) - t0 )) s" >>"$work/build.txt"
cp "$work/build.txt" "$out/build.txt"
grep '^#' "$out/cpu.txt"
awk '$1 == "#" && $2 ~ /^nats-/ {c[$2] = $6; order[n++] = $2} END {
  if (c["nats-sat"] > 0) printf "client us/msg over saturation: 10 %% %.2fx, 50 %% %.2fx (target: 10 %% at most 2x)\n", c["nats-10pct"] / c["nats-sat"], c["nats-50pct"] / c["nats-sat"]
  for (i = 0; i < n; i++) if (order[i] ~ /tick/ && c["nats-sat"] > 0) printf "  %s: %.2fx\n", order[i], c[order[i]] / c["nats-sat"]
}' "$out/cpu.txt"
