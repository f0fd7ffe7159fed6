#!/usr/bin/env python3
"""Where a run's wall time went, from its records: per broker x network the
number of case runs, their summed wall time (wait for an idle link, purge,
connect, warm-up, window, drain, close, purge) and the mean per run, and per
phase the time inside a run. Usage: wall-time.py RECORDS.jsonl [TOTAL_S]
(TOTAL_S: the run's own wall time; the rest is set-up between: link
verification, broker start)."""
import json
import sys
from collections import defaultdict

recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
total = float(sys.argv[2]) if len(sys.argv) > 2 else None
by = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
for r in recs:
    k = (r["broker"], r["network"]["profile"])
    b = by[k]
    b[0] += 1
    b[1] += r.get("wall_s", 0)
    res = r.get("result") or {}
    st = r.get("settings", {})
    b[2] += res.get("connect_s", 0)
    b[3] += st.get("warmup_s", 0) + st.get("window_s", 0)
    b[4] += res.get("close_s", 0)
print("| broker | network | runs | wall s | mean s/run | connect s | warm-up+window s | close s | rest (idle wait, purge, drain) s |")
print("|---|---|---|---|---|---|---|---|---|")
s = 0.0
for (br, net), (n, w, c, ww, cl) in sorted(by.items()):
    s += w
    print(f"| {br} | {net} | {n} | {w:.0f} | {w/n:.1f} | {c:.0f} | {ww:.0f} | {cl:.0f} | {w-c-ww-cl:.0f} |")
print(f"\ncase runs: {s:.0f} s" + (f" of {total:.0f} s wall; between runs (link verification, broker start and stop): {total-s:.0f} s" if total else ""))
