#!/usr/bin/env python3
"""Machine time of a capacity run, measured, and of the capacity-mode
reproduction, projected (docs/capacity.md, "The capacity-mode
reproduction").

    python3 scripts/capacity-budget.py BUNDLE... [--rows wireline=100,wifi-paper=100] [--labs wifi-paper=4]

Reads the records of pslab capacity bundles. Per network and broker: the
rows, the runs per row (the pilot's probes, the counted searches' probes,
the fixed-load runs; runs again on a busy machine included), and the time
a run costs, from one record's start to the next one's in the same lab
(set-up, waits, purges and the run itself; the last run of a lab counts
its own wall time). The projection multiplies the median runs per row by
the median time per run, by the rows of the reproduction, and divides a
shaped network's time by its parallel labs.
"""
import argparse
import collections
import datetime
import json
import os
import statistics
import sys


def read(path):
    if os.path.isdir(path):
        path = os.path.join(path, "records.jsonl")
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def started(r):
    s = r["started"].replace("Z", "+00:00")
    # Go writes nanoseconds; Python takes microseconds.
    if "." in s:
        head, tail = s.split(".", 1)
        frac, _, zone = tail.partition("+")
        if not zone:
            frac, _, zone = tail.partition("-")
            zone = "-" + zone
        else:
            zone = "+" + zone
        s = head + "." + frac[:6] + zone
    return datetime.datetime.fromisoformat(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--rows", default="wireline=100,wifi-paper=100")
    ap.add_argument("--labs", default="wifi-paper=4")
    a = ap.parse_args()
    rows_of = {k: int(v) for k, v in (x.split("=") for x in a.rows.split(","))}
    labs_of = {k: int(v) for k, v in (x.split("=") for x in a.labs.split(","))}

    recs = []
    for b in a.bundles:
        recs += [r for r in read(b) if r.get("mode") in ("capacity-probe", "fixed-load")]
    # Time per run: start to the next start in the same lab and bundle run.
    by_lab = collections.defaultdict(list)
    for r in recs:
        by_lab[(r["run_id"], r["network"]["profile"], r["network"].get("lab", ""))].append(r)
    cost = {}
    for rs in by_lab.values():
        rs.sort(key=started)
        for i, r in enumerate(rs):
            if i + 1 < len(rs):
                cost[id(r)] = (started(rs[i + 1]) - started(r)).total_seconds()
            else:
                cost[id(r)] = r["wall_s"] + (r.get("phases") or {}).get("purge_after_s", 0)
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in recs:
        groups[(r["network"]["profile"], r["broker"])][r["case"] + "/" + r["suite"]].append(r)
    print("%-11s %-8s %4s  %-24s %-20s %9s %11s" % ("network", "broker", "rows", "runs/row med (min-max)", "pilot+counted+fixed", "s/run med", "s/row med"))
    per_net = collections.defaultdict(lambda: {"runs": [], "secs": []})
    for (net, broker), rows in sorted(groups.items()):
        runs, secs, parts = [], [], []
        for rs in rows.values():
            pilot = sum(1 for r in rs if r["mode"] == "capacity-probe" and r["probe"]["search"] == 0)
            counted = sum(1 for r in rs if r["mode"] == "capacity-probe" and r["probe"]["search"] > 0)
            fixed = sum(1 for r in rs if r["mode"] == "fixed-load")
            runs.append(len(rs))
            parts.append((pilot, counted, fixed))
            secs += [cost[id(r)] for r in rs]
        per_net[net]["runs"] += runs
        per_net[net]["secs"] += secs
        med = statistics.median(runs)
        mp = tuple(int(statistics.median(p[i] for p in parts)) for i in range(3))
        print("%-11s %-8s %4d  %-24s %-20s %9.1f %11.0f" % (net, broker, len(rows), "%g (%d-%d)" % (med, min(runs), max(runs)),
                                                            "%d+%d+%d" % mp, statistics.median(secs), med * statistics.median(secs)))
    total = 0.0
    print()
    for net, d in sorted(per_net.items()):
        n = rows_of.get(net, 0)
        labs = labs_of.get(net, 1)
        t = statistics.median(d["runs"]) * statistics.median(d["secs"]) * n / labs
        total += t
        print("%-11s %d rows x %g runs x %.1f s / %d lab(s) = %.0f s (%.1f h)" % (net, n, statistics.median(d["runs"]), statistics.median(d["secs"]), labs, t, t / 3600))
    print("projected machine time: %.0f s (%.1f h)" % (total, total / 3600))


if __name__ == "__main__":
    sys.exit(main())
