#!/usr/bin/env python3
"""Set aside every record of some case rows of a result bundle, so that a
resumed run (`pslab run --resume`) runs those rows again from their first
repetition: the records move from records.jsonl to records.superseded.jsonl
(appended, as written) and their histograms from hist/ to
hist-superseded/TAG/. Whole rows are set aside, never single records, so
that the choice cannot depend on a repetition's outcome.

Usage: set-aside.py BUNDLE --broker B --network N --cases 15,16 --tag TAG

The superseded file is written before records.jsonl (each atomically), so
a kill in between leaves a record in both files, never in none; a second
call finds nothing left to move. Prints what it moved. Refuses, changing
nothing, when a case matches no record or TAG's folder already holds one
of the histograms."""
import argparse
import json
import os
import sys


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--broker", required=True)
    ap.add_argument("--network", required=True)
    ap.add_argument("--cases", required=True, help="comma-separated case ids, e.g. 15,16")
    ap.add_argument("--tag", required=True, help="folder under hist-superseded/ for the histograms")
    a = ap.parse_args()
    cases = {c.strip() for c in a.cases.split(",") if c.strip()}
    path = os.path.join(a.bundle, "records.jsonl")
    keep, aside, hists = [], [], []
    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                sys.exit(f"{path}:{i}: {e}")
            if (r.get("broker") == a.broker and (r.get("network") or {}).get("profile") == a.network
                    and r.get("case") in cases):
                aside.append(line)
                if r.get("histogram_file"):
                    hists.append(r["histogram_file"])
            else:
                keep.append(line)
    found = {json.loads(l)["case"] for l in aside}
    errs = [f"case {c}: no record on {a.broker} over {a.network} in {path}" for c in sorted(cases - found)]
    dest = os.path.join(a.bundle, "hist-superseded", a.tag)
    for h in hists:
        if os.path.exists(os.path.join(dest, os.path.basename(h))):
            errs.append(f"{os.path.join(dest, os.path.basename(h))} exists: choose another --tag")
    if errs:
        sys.exit("set-aside: nothing changed:\n  " + "\n  ".join(errs))
    sup = os.path.join(a.bundle, "records.superseded.jsonl")
    old = open(sup, "rb").read() if os.path.exists(sup) else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    write_atomic(sup, old + b"".join(l if l.endswith(b"\n") else l + b"\n" for l in aside))
    write_atomic(path, b"".join(l if l.endswith(b"\n") else l + b"\n" for l in keep))
    os.makedirs(dest, exist_ok=True)
    moved = 0
    for h in hists:
        src = os.path.join(a.bundle, h)
        if os.path.exists(src):
            os.replace(src, os.path.join(dest, os.path.basename(h)))
            moved += 1
    print(f"set aside {len(aside)} record(s) of case(s) {','.join(sorted(found))} on {a.broker} over {a.network}; "
          f"{moved} histogram(s) to {dest}; {len(keep)} record(s) kept")


if __name__ == "__main__":
    main()
