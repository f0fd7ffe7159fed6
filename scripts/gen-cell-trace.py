#!/usr/bin/env python3
"""Generate a synthetic cellular link trace in Mahimahi's format.

Each output line is a time in milliseconds at which the link may deliver
one packet of up to 1504 bytes (Mahimahi's delivery opportunity); the
trace repeats with the period of its last line (netem/model_trace.go).

The rate varies as a cellular link's does, slot by slot: the log of the
rate is an AR(1) process (a first-order autoregression), so the rate is
log-normal around the mean with a correlation time of a few hundred
milliseconds, as scheduling and fading make it. The parameters are
chosen, not fitted to a measurement: --mean-kbit the long-run rate,
--sigma the standard deviation of the log-rate, --corr the correlation
of one slot with the next, --slot-ms the slot. A seeded generator
(random.Random(seed)) makes the same trace every time:

  python3 scripts/gen-cell-trace.py --mean-kbit 6000 --seed 1 > netem/profiles/traces/cell-synth-down.trace
  python3 scripts/gen-cell-trace.py --mean-kbit 1500 --seed 2 > netem/profiles/traces/cell-synth-up.trace

Only the Python standard library is used. The traces pslab ships were made
with exactly these commands (docs/netem.md).
"""
import argparse
import math
import random
import sys

OPPORTUNITY_BYTES = 1504


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mean-kbit", type=float, required=True, help="long-run mean rate, kbit/s of IP packets")
    ap.add_argument("--period-s", type=float, default=30, help="length of the trace (it repeats)")
    ap.add_argument("--slot-ms", type=int, default=100, help="the rate changes every slot")
    ap.add_argument("--sigma", type=float, default=0.5, help="standard deviation of the log-rate")
    ap.add_argument("--corr", type=float, default=0.8, help="correlation of the log-rate from one slot to the next")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.mean_kbit <= 0 or a.period_s <= 0 or a.slot_ms <= 0 or not 0 <= a.corr < 1 or a.sigma < 0:
        sys.exit("gen-cell-trace: bad arguments")
    rng = random.Random(a.seed)
    period_ms = int(round(a.period_s * 1000))
    x = rng.gauss(0, a.sigma)
    credit = 0.0  # bytes the link may send
    out = []
    for ms in range(1, period_ms + 1):
        if (ms - 1) % a.slot_ms == 0 and ms > 1:
            x = a.corr * x + math.sqrt(1 - a.corr ** 2) * rng.gauss(0, a.sigma)
        # log-normal with mean 1: exp(x - sigma^2 / 2)
        rate = a.mean_kbit * math.exp(x - a.sigma ** 2 / 2)  # kbit/s
        credit += rate * 1000 / 8 / 1000  # bytes in this millisecond
        while credit >= OPPORTUNITY_BYTES:
            out.append(ms)
            credit -= OPPORTUNITY_BYTES
    if not out or out[-1] != period_ms:
        out.append(period_ms)  # the last line sets the period
    sys.stdout.write("".join(f"{m}\n" for m in out))
    mean = len(out) * OPPORTUNITY_BYTES * 8 / period_ms
    print(f"gen-cell-trace: {len(out)} opportunities in {period_ms} ms, mean {mean:.0f} kbit/s", file=sys.stderr)


if __name__ == "__main__":
    main()
