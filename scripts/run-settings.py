#!/usr/bin/env python3
"""The reproduction's run settings from evidence: reads the records of the
committed Gaddah & Kunz runs and prints, per network (and broker),

  - the between-repetition CV of subscriber throughput and of mean latency
    (median over case rows),
  - the within-window CV of the per-second delivery counts (median over
    records),
  - the deliveries per second in the window, per case (median over
    repetitions), and the window that holds >= MIN_DELIVERIES for them,
  - the repetitions a row needs for a 95 % CI within +-CI of the mean,
    under the stated model, and the machine time of the whole
    reproduction with the chosen settings.

Model (stated, not hidden): a window of W seconds averages W per-second
counts. The between-repetition CV of a window's throughput is taken to
shrink as sqrt(W0 / W) from the measured one at W0 (independent seconds),
but never below the floor: the wireline's between-repetition CV, which is
the machine's own noise (the wireline is not link-bound, its windows
already hold 10^5 deliveries). The number of repetitions n is the smallest
with t(0.975, n-1) * CV / sqrt(n) <= CI, at least 3.

Usage: run-settings.py [--parallel N] [--max-reps R] [--scenario FILE]
RECORDS.jsonl... (--scenario: take the chosen phases from the file's
per_network: and max_reps:)
"""
import json
import math
import statistics as st
import sys
from collections import defaultdict

MIN_DELIVERIES = 1000
CI = 0.05
# Chosen settings per network, (warm-up, window, drain) in seconds: read
# from the scenario file's per_network: block (--scenario), these if none.
CHOSEN = {"wireline": (2, 5, 5), "wifi-paper": (5, 180, 15)}


def seconds(v):
    v = str(v)
    for unit, f in (("ms", 0.001), ("m", 60), ("s", 1)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * f
    return float(v)


def chosen_from(path):
    import yaml
    doc = yaml.safe_load(open(path))
    out = dict(CHOSEN)
    for net, ph in (doc.get("per_network") or {}).items():
        d = doc.get("defaults", {})
        out[net] = tuple(seconds(ph.get(k, d.get(k, 0))) for k in ("warmup", "window", "drain"))
    return out, doc.get("max_reps")
# Drain and the time per case run outside warm-up + window (connect, idle
# wait, purges, close) are measured from the records; on wifi-paper the
# whole chosen drain is counted (a backlog is drained over the slow link).

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
        8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160,
        14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000}


def t975(df):
    if df in T975:
        return T975[df]
    keys = sorted(k for k in T975 if k <= df)
    return T975[keys[-1]] if keys else 12.706


def cv(xs):
    if len(xs) < 2:
        return None
    m = st.mean(xs)
    return st.stdev(xs) / m if m > 0 else None


def reps_needed(c, ci=CI, cap=1000, first=3):
    n = first
    while n < cap and t975(n - 1) * c / math.sqrt(n) > ci:
        n += 1
    return n


CURRENT_DRAIN = 2.0  # the committed records' drain, inside their overhead


def expected_cv(net, c0, w0, win, floor):
    """Between-repetition CV expected with a window of win seconds: the
    wireline's is the machine's and does not shrink with the window (its
    windows hold 10^5 deliveries already); a link-bound network's shrinks
    as sqrt(w0 / win), not below the machine's floor."""
    if net == "wireline":
        return c0
    return max(floor, c0 * math.sqrt(w0 / win))
# The run's own sequential rule corrects the estimate: rows repeat until
# the CI is reached, so an optimistic CV costs time, not validity.


def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else float("nan")


def main(argv):
    parallel, max_reps, files = 4, 10, []
    i = 0
    while i < len(argv):
        if argv[i] == "--parallel":
            parallel = int(argv[i + 1])
            i += 2
        elif argv[i] == "--scenario":
            CHOSEN_, mr = chosen_from(argv[i + 1])
            CHOSEN.update(CHOSEN_)
            if mr:
                max_reps = mr
            i += 2
        elif argv[i] == "--max-reps":
            max_reps = int(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    recs = []
    for f in files:
        recs += [json.loads(l) for l in open(f) if l.strip()]
    recs = [r for r in recs if r.get("result") and not r.get("error") and not r.get("quick")]

    rows = defaultdict(list)  # (net, broker, suite, case) -> records
    for r in recs:
        rows[(r["network"]["profile"], r["broker"], r["suite"], r["case"])].append(r)

    print("## 1. Noise, per network x broker (medians over rows / records)\n")
    print("| network | broker | rows | window now (s) | between-rep CV sub tput | between-rep CV mean latency | per-second CV in window | deliveries in window (median) | records < 1000 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    floor = {}
    measured = {}
    overhead = defaultdict(list)
    for net in sorted({k[0] for k in rows}):
        for b in sorted({k[1] for k in rows if k[0] == net}):
            keys = [k for k in rows if k[0] == net and k[1] == b]
            cvt = [cv([r["result"]["sub_tput"] for r in rows[k]]) for k in keys]
            cvl = [cv([r["result"]["latency"]["mean_ms"] for r in rows[k] if r["result"]["latency"]["count"] > 0]) for k in keys]
            secs, dl, few, wins = [], [], 0, []
            for k in keys:
                for r in rows[k]:
                    s = r["settings"]
                    w0, w = int(round(s["warmup_s"])), int(round(s["window_s"]))
                    ser = r["result"]["sub_series"][w0:w0 + w]
                    secs.append(cv(ser))
                    n = r["result"]["counts"]["received_in_window"]
                    dl.append(n)
                    few += n < MIN_DELIVERIES
                    wins.append(s["window_s"])
                    ph = r.get("phases") or {}
                    overhead[net].append(max(0.0, r["wall_s"] - s["warmup_s"] - s["window_s"]) + ph.get("purge_after_s", 0))
            # the rule needs both metrics: the larger CV decides
            measured[(net, b)] = (max(med(cvt), med(cvl)), med(wins))
            floor.setdefault(net, []).append(med(cvt))
            print(f"| {net} | {b} | {len(keys)} | {med(wins):.0f} | {100*med(cvt):.1f} % | {100*med(cvl):.1f} % | {100*med(secs):.0f} % | {med(dl):.0f} | {few} of {len(dl)} |")

    print("\n## 2. Deliveries per second in the window, wifi-paper, per case (median over reps)\n")
    print("| suite | case | factors | nats /s | artemis /s | window for 1000 (s) |")
    print("|---|---|---|---:|---:|---:|")
    need, row_need = [], []
    for (net, _, suite, case) in sorted({(k[0], None, k[2], k[3]) for k in rows if k[0] == "wifi-paper"}):
        per = {}
        for b in ("nats", "artemis"):
            rs = rows.get((net, b, suite, case), [])
            if rs:
                per[b] = st.median(r["result"]["counts"]["received_in_window"] / r["settings"]["window_s"] for r in rs)
        f = next(iter(rows[(net, b, suite, case)] if (net, b, suite, case) in rows else rows[(net, "nats", suite, case)]))["factors"]
        slow = min(per.values())
        w = MIN_DELIVERIES / slow if slow > 0 else float("inf")
        need.append(w)
        for b, rate in per.items():
            row_need.append(MIN_DELIVERIES / rate if rate > 0 else float("inf"))
        desc = f"{f['publishers']}/{f['subscribers']}/{f['topics']} {f['size']} B {f['subscription']}"
        print(f"| {suite} | {case} | {desc} | {per.get('nats', float('nan')):.1f} | {per.get('artemis', float('nan')):.1f} | {w:.0f} |")
    per_row_need = list(need)
    need.sort()
    q = lambda p: need[min(len(need) - 1, int(p * len(need)))]
    print(f"\nWindow for {MIN_DELIVERIES} deliveries over wifi-paper rows: median {q(0.5):.0f} s, 75 % {q(0.75):.0f} s, 90 % {q(0.9):.0f} s, max {need[-1]:.0f} s.")
    chosen_w = CHOSEN["wifi-paper"][1]
    short = sum(1 for w in need if w > chosen_w)
    print(f"With a {chosen_w} s window, {short} of {len(need)} wifi-paper case rows are expected below {MIN_DELIVERIES} deliveries (flagged few-deliveries).")

    print("\nwifi-paper window choices (4 s now): rows expected below 1000 deliveries, and machine time of the wifi-paper half")
    print("\n| window (s) | rows < 1000 | reps (floor) | h, 1 lab | h, %d labs | reps (no floor) | h, %d labs (no floor) |" % (parallel, parallel))
    print("|---:|---:|---:|---:|---:|---:|---:|")
    wu, _, dr = CHOSEN["wifi-paper"]
    c0 = max(measured[k][0] for k in measured if k[0] == "wifi-paper")
    oh = med(overhead["wifi-paper"]) - CURRENT_DRAIN + dr
    nrows = len([k for k in rows if k[0] == "wifi-paper"])
    wl_floor0 = med(floor.get("wireline", [0.0]))
    for win in (30, 60, 90, 120, 180, 300):
        n = min(max_reps, reps_needed(expected_cv("wifi-paper", c0, 4, win, wl_floor0)))
        h = nrows * n * (wu + win + oh) / 3600
        n0 = min(max_reps, reps_needed(expected_cv("wifi-paper", c0, 4, win, 0)))
        h0 = nrows * n0 * (wu + win + oh) / 3600
        print(f"| {win} | {sum(1 for w in need if w > win)} of {len(need)} | {n} | {h:.1f} | {h/parallel:.1f} | {n0} | {h0/parallel:.1f} |")

    print("\n## 3. Repetitions for +-5 % at 95 % and machine time\n")
    wl_floor = med(floor.get("wireline", [0.0]))
    print(f"Floor (machine noise) = wireline between-rep CV = {100*wl_floor:.1f} %; "
          f"needs {reps_needed(wl_floor)} reps for +-{100*CI:.0f} % by itself.\n")
    print("CV now: the larger of the two metrics' median between-repetition CVs (the rule needs both).\n")
    print(f"| network | broker | CV now | warm-up/window/drain (s) | CV expected | reps for +-5 % | reps used (cap {max_reps}) | drain+overhead/run (s) | rows | case runs | machine time (h) |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    total_h = {1: 0.0, parallel: 0.0}
    for (net, b), (c0, w0) in sorted(measured.items()):
        wu, win, dr = CHOSEN[net]
        cexp = expected_cv(net, c0, w0, win, 0)
        n = reps_needed(cexp)
        used = min(n, max_reps)
        oh = med(overhead[net]) if net == "wireline" else dr + med(overhead[net]) - CURRENT_DRAIN
        nrows = len([k for k in rows if k[0] == net and k[1] == b])
        runs = nrows * used
        h = runs * (wu + win + dr + oh) / 3600
        total_h[1] += h
        total_h[parallel] += h / (parallel if net != "wireline" else 1)
        print(f"| {net} | {b} | {100*c0:.1f} % | {wu}/{win}/{dr} | {100*cexp:.1f} % | {n} | {used} | {oh:.1f} | {nrows} | {runs} | {h:.2f} |")
    wu, _, dr = CHOSEN["wifi-paper"]
    oh = med(overhead["wifi-paper"]) - CURRENT_DRAIN + dr
    lb = sum(3 * (wu + w + oh) for w in row_need if w != float("inf")) / 3600
    print(f"\nLower bound of the wifi-paper half if each row had its own window of exactly {MIN_DELIVERIES} deliveries, 3 reps: "
          f"{lb:.1f} h with one lab, {lb/parallel:.1f} h in {parallel} labs.")
    print(f"\nWhole reproduction: {total_h[1]:.1f} h with one lab; {total_h[parallel]:.1f} h with wifi-paper cases in {parallel} parallel labs (wireline alone). Target: 3 h.")


if __name__ == "__main__":
    main(sys.argv[1:])
