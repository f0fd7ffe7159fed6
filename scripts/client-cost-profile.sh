#!/usr/bin/env bash
# Where the load client's CPU goes, core NATS 1/1/1 on the wireline with
# 100 B bodies, saturating and open loop at 10 % of saturation (issue 31,
# item 7; results/client-cost/README.md, "Where the time goes"). For each
# load it runs one case with pslab's --cpuprofile (Go's profiler: the
# goroutines' code) and, when `perf` is installed, `perf stat` (system
# calls and context switches of every thread) and `perf record -g`
# (every thread's CPU, the Go runtime's sysmon thread and the kernel's
# work inside system calls included, which Go's profiler does not see)
# over a few seconds inside the measurement window. The shape of a
# profile does not need a quiet machine; the CPU per message quoted in
# the README comes from scripts/client-cost-fractions.sh under the lock.
#   SAT: the saturated msg/s to take 10 % of (default: the mean in
#        results/client-cost/fractions/cpu.txt); OUT (default
#        results/client-cost/profile); TICKS: extra 10 % cases with these
#        pace_tick values, e.g. "3ms 5ms" (messages per wake-up)
# Writes OUT/CASE/{pprof-top.txt,perf-stat.txt,perf-top.txt,record.json}
# and OUT/summary.txt (per second and per pacer wake-up).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-results/client-cost/profile}
sat=${SAT:-$(awk '$1 == "#" && $2 == "nats-sat" {print $NF}' results/client-cost/fractions/cpu.txt)}
[ -n "$sat" ] || { echo "client-cost-profile: no saturated msg/s (set SAT)" >&2; exit 2; }
r10=$(awk -v s="$sat" 'BEGIN {printf "%d", 0.1 * s}')
work=$(mktemp -d /tmp/client-cost-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pslab" ./cmd/pslab
have_perf=false
command -v perf >/dev/null 2>&1 && have_perf=true

cases="sat 10pct"
{
  cat <<EOF
suite: client-cost-profile
brokers: [nats]
networks: [wireline]
reps: 1
defaults: {publishers: 1, subscribers: 1, topics: 1, subscription: non-durable, delivery: non-persistent, ack: auto, body: bytes, size: 100, warmup: 2s, window: 12s, drain: 5s}
cases:
  - {id: sat, name: "core NATS 1/1/1, saturating"}
  - {id: 10pct, name: "core NATS 1/1/1, 10 % of $sat msg/s", rate: $r10}
EOF
  for t in ${TICKS:-}; do
    echo "  - {id: 10pct-tick-$t, name: \"core NATS 1/1/1, 10 % of $sat msg/s, pace_tick $t\", rate: $r10, pace_tick: $t}"
    cases="$cases 10pct-tick-$t"
  done
} >"$work/scenario.yaml"

rm -rf "$out"
mkdir -p "$out"
cp "$work/scenario.yaml" "$out/scenario.yaml" # the records name it by this relative path
events=task-clock,context-switches,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep
for c in $cases; do
  mkdir -p "$out/$c"
  echo "client-cost-profile: $c" >&2
  "$work/pslab" run "$out/scenario.yaml" --cases "$c" --out "$work/$c" --cpuprofile "$work/$c.pprof" >"$work/$c.log" 2>&1 &
  pid=$!
  if $have_perf; then
    sleep 5 # connected and warmed up: inside the window
    perf stat -x, -e "$events" -p "$pid" -- sleep 4 2>"$out/$c/perf-stat.txt" >/dev/null || true
    perf record -q -F 999 -g -p "$pid" -o "$work/$c.perf" -- sleep 3 >/dev/null 2>&1 || true
  fi
  wait "$pid" || { tail -20 "$work/$c.log" >&2; exit 1; }
  go tool pprof -top -nodecount=40 "$work/pslab" "$work/$c.pprof" >"$out/$c/pprof-top.txt" 2>/dev/null
  if $have_perf && [ -s "$work/$c.perf" ]; then
    {
      echo "# perf report --children --sort sym -g none: share of the client process's CPU samples (every thread)"
      perf report -i "$work/$c.perf" --children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -120 || true
      echo "# perf report --sort pid: share per thread"
      perf report -i "$work/$c.perf" --no-children --sort pid --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' || true
    } >"$out/$c/perf-top.txt"
  fi
  cp "$work/$c/records.jsonl" "$out/$c/record.json"
done

# Per second and per pacer wake-up, from perf stat's 4 s and the record.
{
  echo "case sub_msg_s ticks_s cpu_ms_s client_us_msg ctxsw_s write_s read_s epoll_s futex_s nanosleep_s cpu_us_per_tick ctxsw_per_tick"
  for c in $cases; do
    sub=$(jq -r '.result.sub_tput' "$out/$c/record.json")
    tick=$(jq -r '.result.pacer.tick_us // 0' "$out/$c/record.json")
    if [ -s "$out/$c/perf-stat.txt" ]; then
      awk -F, -v c="$c" -v subs="$sub" -v tick="$tick" '
        $3 == "task-clock" {cpu = $1 / 4}
        $3 == "context-switches" {cs = $1 / 4}
        $3 ~ /write$/ {w = $1 / 4} $3 ~ /read$/ {r = $1 / 4} $3 ~ /epoll_pwait$/ {e = $1 / 4}
        $3 ~ /futex$/ {f = $1 / 4} $3 ~ /nanosleep$/ {n = $1 / 4}
        END {
          ticks = 0; pt = "-"; ct = "-"
          if (tick > 0) { ticks = 1e6 / tick; pt = sprintf("%.0f", cpu * 1000 / ticks); ct = sprintf("%.1f", cs / ticks) }
          printf "%s %.0f %.0f %.1f %.3f %.0f %.0f %.0f %.0f %.0f %.0f %s %s\n", c, subs, ticks, cpu, cpu * 1000 / subs, cs, w, r, e, f, n, pt, ct
        }' "$out/$c/perf-stat.txt"
    else
      echo "$c $sub - - - - - - - - - - -"
    fi
  done
} | column -t >"$out/summary.txt"
{
  echo "pslab: the working tree of $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo ' (with changes not committed)')"
  echo "go: $(go env GOVERSION); perf: $($have_perf && perf --version || echo none); saturation taken as $sat msg/s"
} >"$out/build.txt"
cat "$out/summary.txt"
