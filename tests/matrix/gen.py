#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen.py - the congestion-control property matrix's grid, as scenario
descriptions (host_stubs/scenario/README.md) for mcc_scenario --spec.

  gen.py [--quick|--full] --out DIR     writes DIR/CELL.ini, prints the cell names

Cells (one flow per sender, one receiver port as the bottleneck):
  incastN      N:1 fan-in, N bulk flows 1 MiB x 4 outstanding, plus a 64 KiB
               victim flow (outstanding 1) from one more sender (N < 64: the
               runner has 64 senders at most, so incast64 has no victim)
  shK-SZ       K bulk flows (K senders, one receiver), staggered starts
               0, 0, +STEP, +2 STEP, ...; SZ = 256k (256 KiB x 16) or 1m (1 MiB x 4);
               sh1-1m-rtt5000: one flow alone on a 5 ms path (efficiency);
               sh4-1m-100g / -400g: four joining in turn at 100 and 400 Gb/s,
               where every fair window is far above the minimum
  jnK-GgG-rttR K flows of 1 MiB x 8 joining in turn, 50 ms apart, the first
               alone (a deeper backlog than shK's), at 100 and 400 Gb/s with
               a 30 us round trip: where convergence is slowest
  *-rttR       base RTT R us: the model's WRITE round trip crosses three
               propagation delays (sender -> switch, switch -> receiver, the
               ACK back as one event; host_stubs/fabric/model.c), so
               prop_ns = R * 1000 / 3 (+ 0..31 ns jitter per hop, + serialisation)
  *-GgG        link rate G Gb/s: the switch buffer scales with the rate so it
               holds the same time of traffic as the model's default at 25
               Gb/s (4 MiB ~ 1.34 ms): switch_buf = 4 MiB x G/25,
               xoff = 3/4 of it (3 MiB at 25 Gb/s: the model's default),
               xon = xoff / 2
  mixed        a 4 KiB victim (outstanding 1) + 2 bulk 1 MiB x 4 flows
  qos-shared   8 LOW-priority bulk flows (1 MiB x 4, one per sender) and a
               HIGH-priority flow of 64 KiB tasks (outstanding 1, the victim)
               on sender 0, beside that sender's LOW flow; [host] qos = 1
               (the engine passes TENT's priorities to the policy; TE has
               none and runs the cell as a victim beside 8 bulk flows)
  qos-own      the same with the HIGH flow on a ninth sender of its own
Without a suffix: 25 Gb/s, the model's default propagation (1000 ns a hop,
~3 us base RTT).
"""
import argparse
import os
import sys

MiB = 1 << 20


def fabric(link_gbps=25, rtt_us=None):
    f = {"link_gbps": link_gbps}
    buf = 4 * MiB * link_gbps // 25
    f["switch_buf"] = buf
    f["xoff"] = buf * 3 // 4
    f["xon"] = buf * 3 // 8
    if rtt_us is not None:
        f["prop_ns"] = max(1, round(rtt_us * 1000 / 3))
    return f


# the fairness interval starts this long after the last join (issue: Jain
# >= 0.95 within 50 ms of the join)
SETTLE_MS = 50


def suffix(link, rtt):
    """A cell name's suffix: -GgG off 25 Gb/s, -rttR with a base RTT."""
    return ("-%dg" % link if link != 25 else "") + ("-rtt%d" % rtt if rtt is not None else "")


def incast(n, dur, link=25, rtt=None, victim=True):
    name = "incast%d" % n + suffix(link, rtt)
    flows = [("bulk", "0-%d" % (n - 1) if n > 1 else "0",
              dict(size="1M", outstanding=4))]
    senders = n
    victim = victim and n < 64  # its own sender: 64 is the runner's limit
    # at least 3 rounds of every sender's outstanding bytes through the port
    dur = max(dur, round(3 * n * 4 * MiB * 8 / (link * 1e9), 3))
    if victim:
        flows.append(("victim", str(n), dict(size="64K", outstanding=1, victim=1)))
        senders += 1
    return dict(name=name, kind="incast", n=n, bulk=n, victim=victim, dur=dur,
                senders=senders, fabric=fabric(link, rtt), flows=flows, settle_ms=SETTLE_MS)


def share(k, sz, dur, step, link=25, rtt=None):
    size, out = ("256K", 16) if sz == "256k" else ("1M", 4)
    name = "sh%d-%s" % (k, sz) + suffix(link, rtt)
    flows = []
    for i in range(k):
        start = 0.0 if i < 2 else round((i - 1) * step, 6)
        flows.append(("f%d" % i, str(i), dict(size=size, outstanding=out, start_s=start)))
    return dict(name=name, kind="share", n=k, bulk=k, victim=False, dur=dur,
                senders=k, fabric=fabric(link, rtt), flows=flows, settle_ms=SETTLE_MS)


def join(k, dur, step, link=25, rtt=None):
    """k flows of 1 MiB x 8 joining one port one at a time, step apart: a
    deeper backlog than share()'s, the first flow alone at the start."""
    name = "jn%d" % k + suffix(link, rtt)
    flows = [("f%d" % i, str(i), dict(size="1M", outstanding=8, start_s=round(i * step, 6)))
             for i in range(k)]
    return dict(name=name, kind="share", n=k, bulk=k, victim=False, dur=dur,
                senders=k, fabric=fabric(link, rtt), flows=flows, settle_ms=SETTLE_MS)


def mixed(dur, link=25, rtt=None):
    name = "mixed" + suffix(link, rtt)
    flows = [("bulk", "0-1", dict(size="1M", outstanding=4)),
             ("victim", "2", dict(size="4K", outstanding=1, victim=1))]
    return dict(name=name, kind="mixed", n=2, bulk=2, victim=True, dur=dur,
                senders=3, fabric=fabric(link, rtt), flows=flows, settle_ms=SETTLE_MS)


def qos(own, dur, link=25):
    name = "qos-own" if own else "qos-shared"
    flows = [("bulk", "0-7", dict(size="1M", outstanding=4, priority="low")),
             ("high", "8" if own else "0",
              dict(size="64K", outstanding=1, victim=1, priority="high"))]
    return dict(name=name, kind="qos", n=8, bulk=8, victim=True, dur=dur,
                senders=9 if own else 8, fabric=fabric(link), flows=flows,
                settle_ms=SETTLE_MS, host=dict(qos=1), high_shared=not own)


def grid(tier):
    """The cells of a tier. quick: what fits in ~8 minutes on 2 cores
    (make check-cc-matrix); full: the whole grid (make bench-cc-matrix)."""
    if tier == "quick":
        d, step = 0.3, 0.1
        return [incast(2, d), incast(8, d), incast(32, d), incast(64, d),
                share(2, "1m", d, step), share(3, "256k", d + step, step),
                share(4, "256k", d + 2 * step, step), share(8, "1m", d + 6 * step, step),
                share(2, "1m", d, step, rtt=200), share(2, "1m", d, step, link=100),
                share(4, "1m", d + 2 * step, step, link=400),
                mixed(d), qos(False, d), qos(True, d)]
    d, step = 0.3, 0.1
    cells = [incast(n, d) for n in (2, 4, 8, 16, 32, 64)]
    for k in (2, 3, 4, 6, 8):
        for sz in ("256k", "1m"):
            cells.append(share(k, sz, d + (k - 2) * step, step))
    for rtt in (5, 20, 50, 100, 200, 500, 1000):
        cells.append(share(2, "1m", d, step, rtt=rtt))
        cells.append(incast(8, d, rtt=rtt))
    cells.append(share(1, "1m", 1.0, step, rtt=5000))
    for link in (100, 400):
        cells.append(share(2, "1m", d, step, link=link))
        cells.append(share(4, "1m", d + 2 * step, step, link=link))
        cells.append(incast(16, d, link=link))
        cells.append(mixed(d, link=link))
        cells.append(join(4, 0.4, 0.05, link=link, rtt=30))  # fast ports, a longer round trip
    cells.append(mixed(d))
    cells.append(mixed(d, rtt=50))
    cells.append(qos(False, d))
    cells.append(qos(True, d))
    return cells


def ini(c):
    out = ["; generated by tests/matrix/gen.py", "[scenario]", "name = %s" % c["name"],
           "duration_s = %g" % c["dur"], "senders = %d" % c["senders"], "receivers = 1",
           "nics = 1", "", "[fabric]"]
    out += ["%s = %s" % kv for kv in c["fabric"].items()]
    if c.get("host"):
        out += ["", "[host]"] + ["%s = %s" % kv for kv in c["host"].items()]
    for fname, senders, kv in c["flows"]:
        out += ["", "[flow.%s]" % fname, "senders = %s" % senders, "receiver = 0"]
        out += ["%s = %s" % (k, v) for k, v in kv.items()]
    out += ["", "[measure]", "fair_settle_ms = %d" % c["settle_ms"], ""]
    return "\n".join(out)


def write(cells, d):
    os.makedirs(d, exist_ok=True)
    paths = []
    for c in cells:
        p = os.path.join(d, c["name"] + ".ini")
        with open(p, "w") as f:
            f.write(ini(c))
        paths.append(p)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true")
    g.add_argument("--full", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    cells = grid("full" if a.full else "quick")
    write(cells, a.out)
    for c in cells:
        print(c["name"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
