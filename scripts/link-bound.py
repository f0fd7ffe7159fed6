#!/usr/bin/env python3
"""Link bound of core NATS 1/1/1 over an emulated link, from a records file.

bound (msgs/s) = usable link bytes per second / NATS bytes one message puts
on the link. Usable bytes per second: the TCP goodput the profile's own
verification measured before the run (payload bytes TCP delivered per
second, with the profile's loss). Bytes per message: the PUB frame from the
client and the MSG frame to the subscriber (TCP payload). On a half-duplex
profile both frames share one budget; on a full-duplex one each direction
has its own, so the bound is the slower direction.
"""
import json, statistics, sys

recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = []
for r in recs:
    if r.get("error") or not r.get("result"):
        continue
    size = r["factors"]["size"]
    subj = "pslab-%s-c%s-r%d.t0" % (r["run_id"], r["case"], r["rep"])
    pub = len("PUB %s %d\r\n" % (subj, size)) + size + 2
    sub = len("MSG %s %d %d\r\n" % (subj, 1, size)) + size + 2
    v = r["network"]["verify"]
    up = v["to_broker"]["goodput_kbit"] * 1000 / 8
    down = v["to_client"]["goodput_kbit"] * 1000 / 8
    if r["network"]["spec"]["duplex"] == "half":
        usable = statistics.mean([up, down])
        bound = usable / (pub + sub)
    else:
        bound = min(up / pub, down / sub)
    rows.append((r["rep"], r["result"]["sub_tput"], bound, pub, sub, up, down))
print("rep  sub msgs/s  bound msgs/s  ratio  (PUB %d B + MSG %d B per message; verified goodput %.0f / %.0f B/s up/down)" %
      (rows[0][3], rows[0][4], rows[0][5], rows[0][6]))
for rep, tput, bound, *_ in rows:
    print("%3d  %10.2f  %12.2f  %5.3f" % (rep, tput, bound, tput / bound))
print("mean ratio: %.3f" % statistics.mean(t / b for _, t, b, *_ in rows))
