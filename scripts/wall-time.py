#!/usr/bin/env python3
"""Where a run's wall time went, from its records: per broker x network the
number of case runs, their summed wall time and the mean per run, and per
phase the time inside a run: waiting for an idle link, the purge before
the case, connection set-up, warm-up and window, the drain and the rest of
the load engine, closing (or dropping) the connections, and the purge
after the case (which is outside wall_s). Records written before the
phases were timed have no idle/purge split: it is then in "rest".
Usage: wall-time.py RECORDS.jsonl [TOTAL_S] (TOTAL_S: the run's own wall
time; what the records do not explain is set-up between cases: link
verification, broker start and stop, warm-up runs)."""
import json
import sys
from collections import defaultdict

recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
total = float(sys.argv[2]) if len(sys.argv) > 2 else None
cols = ["runs", "wall", "idle", "purge", "connect", "window", "close", "purge_after"]
by = defaultdict(lambda: dict.fromkeys(cols, 0.0))
for r in recs:
    b = by[(r["broker"], r["network"]["profile"])]
    res = r.get("result") or {}
    st = r.get("settings", {})
    ph = r.get("phases") or {}
    b["runs"] += 1
    b["wall"] += r.get("wall_s", 0)
    b["idle"] += ph.get("idle_wait_s", 0)
    b["purge"] += ph.get("purge_s", 0)
    b["connect"] += res.get("connect_s", 0)
    b["window"] += st.get("warmup_s", 0) + st.get("window_s", 0)
    b["close"] += res.get("close_s", 0)
    b["purge_after"] += ph.get("purge_after_s", 0)
print("| broker | network | runs | wall s | mean s/run | idle-link wait s | purge s | connect s | warm-up+window s | drain and rest s | close s | purge after s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
s = 0.0
for (br, net), b in sorted(by.items()):
    rest = b["wall"] - b["idle"] - b["purge"] - b["connect"] - b["window"] - b["close"]
    s += b["wall"] + b["purge_after"]
    print(f"| {br} | {net} | {b['runs']:.0f} | {b['wall']:.0f} | {b['wall']/b['runs']:.1f} | {b['idle']:.0f} | {b['purge']:.0f} | "
          f"{b['connect']:.0f} | {b['window']:.0f} | {rest:.0f} | {b['close']:.0f} | {b['purge_after']:.0f} |")
print(f"\ncase runs (with the purge after each): {s:.0f} s" +
      (f" of {total:.0f} s wall; between runs (link verification, broker start and stop, warm-up runs): {total-s:.0f} s" if total else ""))
