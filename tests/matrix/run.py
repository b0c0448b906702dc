#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run.py - the congestion-control property matrix: runs gen.py's cells
through mcc_scenario --spec (arms off, enforce = the aimd law, enforce:delay =
the delay law; engines te and tent; seeds) in parallel and checks each
property per cell against the off arm of the same cell, engine and seed.

  run.py [--quick|--full] --bin MCC_SCENARIO --out DIR [-j N] [--seeds N]
         [--strict-delay] [--report-only] [--gnuplot PATH]

Writes DIR/report.md (one table per property: rows = cells, columns =
engine x law, PASS/FAIL with the value, the worst seed's), DIR/results.csv
(one row per cell, engine, law, seed and property), DIR/raw.txt (the RESULT
lines), DIR/specs/ (the cells) and, with gnuplot, DIR/heat-PROPERTY.png
(cells x engine/law coloured by the margin).

Exit status: 0 when every cell passes every property under the aimd law,
except the verdicts listed in known-failures.txt (reported as KNOWN; one that
passes is reported so the list can shrink); 1 otherwise (the delay law's
failures count only with --strict-delay);
--report-only: 0 whatever the result (make bench-cc-matrix); 2 when a run
itself failed (no RESULT line).
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

# ---------------------------------------------------------------- thresholds
# Every threshold of the matrix, in one place. Do not loosen one to make the
# matrix pass: it measures the control law, it is not tuned to it.
T = {
    "jain_min": 0.95,            # fairness: Jain's index, enforce arm, >= 2 bulk flows
    "goodput_ratio_min": 0.98,   # efficiency: goodput(enforce) / goodput(off)
    "pause_incast_n": 32,        # pause: incast cells with N >= this ...
    "pause_ratio_max": 0.10,     # ... need pause(enforce) <= max(0.1 x pause(off),
    "pause_floor_ms": 1.0,       #     1 ms); every other cell pause(enforce) <= pause(off)
    "vp99_ratio_max": 1.10,      # victim: vp99(enforce) <= 1.1 x vp99(off)
    "qos_high_ratio_max": 0.50,  # qos-high: HIGH p99(enforce) <= 0.5 x HIGH p99(off)
                                 #   and <= 0.5 x LOW p99(enforce)
    "qos_low_ratio_min": 0.97,   # qos-low: LOW goodput(enforce) >= 0.97 x what the port
                                 #   carried under off less HIGH's Gb/s under enforce ...
    "qos_share_min": 0.80,       #   ... and every LOW flow >= 0.8 x its fair share
}
LAWS = [("aimd", "enforce"), ("delay", "enforce:delay")]
KNOWN_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known-failures.txt")


def known_failures():
    """{(property, cell, engine, law)} the control law does not pass yet:
    known-failures.txt, one "property cell engine law" per line, # comments."""
    known = set()
    with open(KNOWN_FILE) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if len(w) == 4:
                known.add(tuple(w))
    return known
ENGINES = ["te", "tent"]
PROPS = ["fairness", "efficiency", "pause", "queue", "victim", "lossless", "qos-high",
         "qos-low"]
DESC = {
    "fairness": "Jain's index over the bulk flows in the fairness interval >= %.2f "
                "(cells with >= 2 bulk flows)" % T["jain_min"],
    "efficiency": "goodput of all flows (enforce) >= %.2f x (off)" % T["goodput_ratio_min"],
    "pause": "incast N >= %d: pause(enforce) <= max(%.1f x pause(off), %g ms); "
             "elsewhere pause(enforce) <= pause(off)" % (T["pause_incast_n"], T["pause_ratio_max"],
                                                        T["pause_floor_ms"]),
    "queue": "qsteady(enforce) <= qsteady(off) (peak egress queue over the last 40 %% of "
             "the run; qavg = its time-weighted mean, reported)",
    "victim": "vp99(enforce) <= %.1f x vp99(off) (cells with a victim flow)" % T["vp99_ratio_max"],
    "lossless": "lost == 0, corrupt == 0, leaked == 0 in every arm (off included)",
    "qos-high": "qos cells, TENT (TE has no priorities): HIGH p99(enforce) <= %.1f x HIGH "
                "p99(off) and <= %.1f x LOW p99(enforce)" % (T["qos_high_ratio_max"],
                                                          T["qos_high_ratio_max"]),
    "qos-low": "qos cells, TENT: LOW goodput(enforce) >= %.2f x (total(off) - HIGH(enforce)), "
               "HIGH = total - goodput under enforce (the reserve costs LOW nothing beyond the "
               "bytes HIGH itself moves; `lit` is LOW(enforce) / LOW(off)); and every LOW flow's "
               "Gb/s in the fairness interval >= %.1f x its fair share: its sender's equal share "
               "of the port (the route, the law's unit of fairness) less HIGH's Gb/s where HIGH "
               "shares that sender (no starvation)" % (T["qos_low_ratio_min"], T["qos_share_min"]),
}


def parse_result(line):
    r = {}
    for tok in line.split()[1:]:
        if "=" in tok:
            k, v = tok.split("=", 1)
            r[k] = v
    for k in ("goodput", "total", "pause", "jain", "vp99", "qavg", "p99", "hp99", "lp99"):
        r[k] = float(r.get(k, "nan"))
    fg = r.get("fair_gbps", "-")
    r["fair"] = [float(x) for x in fg.split(",")] if fg != "-" else []
    for k in ("qsteady", "lost", "corrupt", "leaked"):
        r[k] = int(r.get(k, "0"))
    return r


def run_one(binary, spec, engine, arm, seed, quick):
    cmd = [binary, "--spec", spec, "--arms", arm, "--engine", engine, "--seed", str(seed),
           "--machine"]
    if quick:
        cmd.append("--quick")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    for line in p.stdout.splitlines():
        i = line.find("RESULT ")
        if i >= 0:
            return line[i:], None
    return None, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-400:])


def check(cell, off, enf, engine):
    """{property: (applies, ok, value text, margin)} for one enforce arm
    against the off arm of the same cell, engine and seed."""
    out = {}
    if cell["kind"] == "qos" and engine == "tent":
        h0, h1, l1 = off["hp99"], enf["hp99"], enf["lp99"]
        lim = T["qos_high_ratio_max"] * min(h0, l1)
        out["qos-high"] = (True, h1 <= lim, "%.0f/%.0f/%.0fus" % (h1, h0, l1),
                           (lim - h1) / lim if lim > 0 else -1.0)
        g0, g1 = off["goodput"], enf["goodput"]
        high = max(0.0, enf["total"] - g1)  # the HIGH (victim) flow's Gb/s
        avail = off["total"] - high
        ratio = g1 / avail if avail > 0 else 1.0
        fair, n = enf["fair"], cell["bulk"]
        if cell["high_shared"]:  # HIGH beside bulk flow 0, on sender 0
            want = [enf["total"] / n - (high if i == 0 else 0.0) for i in range(n)]
        else:
            want = [(enf["total"] - high) / n] * n
        share = min(f / w for f, w in zip(fair, want)) if len(fair) == n and min(want) > 0 \
            else 0.0
        ok = ratio >= T["qos_low_ratio_min"] and share >= T["qos_share_min"]
        out["qos-low"] = (True, ok, "%.3f lit%.3f share%.2f" % (ratio, g1 / g0 if g0 > 0 else 1.0,
                                                               share),
                          min(ratio - T["qos_low_ratio_min"], share - T["qos_share_min"]))
    else:
        out["qos-high"] = (False, True, "-", 0.0)
        out["qos-low"] = (False, True, "-", 0.0)
    if cell["bulk"] >= 2:
        j = enf["jain"]
        out["fairness"] = (True, j >= T["jain_min"], "%.3f" % j, j - T["jain_min"])
    else:
        out["fairness"] = (False, True, "-", 0.0)
    # every flow's bytes, victims included: a latency flow that gets its
    # transfers through faster under enforce takes its share of the port
    g0, g1 = off["total"], enf["total"]
    ratio = g1 / g0 if g0 > 0 else 1.0
    out["efficiency"] = (True, ratio >= T["goodput_ratio_min"],
                         "%.2f/%.2f=%.3f" % (g1, g0, ratio), ratio - T["goodput_ratio_min"])
    p0, p1 = off["pause"], enf["pause"]
    if cell["kind"] == "incast" and cell["n"] >= T["pause_incast_n"]:
        lim = max(T["pause_ratio_max"] * p0, T["pause_floor_ms"])
    else:
        lim = p0
    out["pause"] = (True, p1 <= lim, "%.2f<=%.2fms" % (p1, lim),
                    (lim - p1) / max(lim, T["pause_floor_ms"]))
    q0, q1 = off["qsteady"], enf["qsteady"]
    out["queue"] = (True, q1 <= q0, "%dK/%dK avg%dK" % (q1 >> 10, q0 >> 10, enf["qavg"] / 1024),
                    (q0 - q1) / max(q0, 1))
    if cell["victim"]:
        v0, v1 = off["vp99"], enf["vp99"]
        lim = T["vp99_ratio_max"] * v0
        out["victim"] = (True, v1 <= lim, "%.0f/%.0fus" % (v1, v0),
                         (lim - v1) / lim if lim > 0 else -1.0)
    else:
        out["victim"] = (False, True, "-", 0.0)
    bad = [a for a in (off, enf) if a["lost"] or a["corrupt"] or a["leaked"]]
    out["lossless"] = (True, not bad,
                       "ok" if not bad else "lost%d/corr%d/leak%d" % (
                           bad[0]["lost"], bad[0]["corrupt"], bad[0]["leaked"]),
                       0.0 if not bad else -1.0)
    return out


def heatmaps(gnuplot, outdir, cells, agg):
    cols = ["%s/%s" % (e, law) for e in ENGINES for law, _ in LAWS]
    for prop in PROPS:
        dat = os.path.join(outdir, "heat-%s.dat" % prop)
        with open(dat, "w") as f:
            for y, c in enumerate(cells):
                for x, col in enumerate(cols):
                    e, law = col.split("/")
                    a = agg.get((c["name"], e, law, prop))
                    m = a[3] if a and a[0] else 0.0
                    f.write("%d %d %.4f\n" % (x, y, max(-1.0, min(1.0, m))))
                f.write("\n")
        gp = os.path.join(outdir, "heat-%s.gp" % prop)
        ytics = ", ".join('"%s" %d' % (c["name"], i) for i, c in enumerate(cells))
        xtics = ", ".join('"%s" %d' % (col, i) for i, col in enumerate(cols))
        with open(gp, "w") as f:
            f.write("set terminal png size 700,%d\nset output '%s'\n" % (
                200 + 22 * len(cells), os.path.join(outdir, "heat-%s.png" % prop)))
            f.write("set title '%s: margin (green pass, red fail, grey n/a)'\n" % prop)
            f.write("set xtics (%s)\nset ytics (%s)\n" % (xtics, ytics))
            f.write("set cbrange [-1:1]\nset palette defined (-1 'red', -0.001 'orange', "
                    "0 'grey', 0.001 'light-green', 1 'dark-green')\n")
            f.write("set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n" % (len(cols) - 0.5,
                                                                      len(cells) - 0.5))
            f.write("plot '%s' u 1:2:3 with image notitle\n" % dat)
        p = subprocess.run([gnuplot, gp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode:
            print("gnuplot failed on %s: %s" % (gp, p.stderr.strip()[-300:]), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="make check-cc-matrix's tier (default)")
    g.add_argument("--full", action="store_true", help="make bench-cc-matrix's tier")
    ap.add_argument("--bin", required=True, help="mcc_scenario")
    ap.add_argument("--out", required=True)
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seeds", type=int, default=None, help="default: 1 quick, 3 full")
    ap.add_argument("--strict-delay", action="store_true",
                    help="the delay law's failures fail the run too")
    ap.add_argument("--report-only", action="store_true", help="exit 0 whatever the result")
    ap.add_argument("--gnuplot", default=shutil.which("gnuplot") or "")
    a = ap.parse_args()
    tier = "full" if a.full else "quick"
    nseeds = a.seeds or (3 if a.full else 1)
    seeds = list(range(1, nseeds + 1))
    cells = gen.grid(tier)
    os.makedirs(a.out, exist_ok=True)
    paths = gen.write(cells, os.path.join(a.out, "specs"))
    arms = ["off"] + [arm for _, arm in LAWS]
    jobs = [(c, p, e, arm, s) for c, p in zip(cells, paths) for e in ENGINES for s in seeds
            for arm in arms]
    # the biggest cells first: the pool ends with small jobs
    jobs.sort(key=lambda j: -j[0]["senders"] * j[0]["dur"])
    t0 = time.time()
    res, errors = {}, []
    with ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        futs = {ex.submit(run_one, a.bin, p, e, arm, s, tier == "quick"): (c["name"], e, arm, s)
                for c, p, e, arm, s in jobs}
        for f, key in futs.items():
            line, err = f.result()
            if err:
                errors.append(err)
            else:
                res[key] = line
    wall = time.time() - t0
    with open(os.path.join(a.out, "raw.txt"), "w") as f:
        for key in sorted(res):
            f.write("%s %s %s seed=%d %s\n" % (key[0], key[1], key[2], key[3], res[key]))
    parsed = {k: parse_result(v) for k, v in res.items()}
    # per (cell, engine, law, prop): applies, ok (every seed), worst value, worst margin
    agg, rows = {}, []
    for c in cells:
        for e in ENGINES:
            for law, arm in LAWS:
                for s in seeds:
                    off = parsed.get((c["name"], e, "off", s))
                    enf = parsed.get((c["name"], e, arm, s))
                    if not off or not enf:
                        continue
                    for prop, (app, ok, val, m) in check(c, off, enf, e).items():
                        rows.append([c["name"], e, law, s, prop, int(app), "PASS" if ok else "FAIL",
                                     val, "%.4f" % m, enf["jain"], enf["goodput"], enf["pause"],
                                     enf["qsteady"], int(enf["qavg"]), enf["vp99"]])
                        k = (c["name"], e, law, prop)
                        prev = agg.get(k)
                        if prev is None or m < prev[3]:
                            agg[k] = (app, ok and (prev is None or prev[1]), val, m)
                        elif not ok:
                            agg[k] = (prev[0], False, prev[2], prev[3])
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cell", "engine", "law", "seed", "property", "applies", "verdict", "value",
                    "margin", "jain", "goodput_gbps", "pause_ms", "qsteady", "qavg", "vp99_us"])
        w.writerows(rows)
    cols = [(e, law) for e in ENGINES for law, _ in LAWS]
    fails = {law: 0 for law, _ in LAWS}
    md = ["# Congestion-control property matrix (%s tier)" % tier, "",
          "%d cells x %d engines x %d arms x %d seed(s) = %d runs in %.0f s with -j %d "
          "(mcc_scenario --spec; arms: off, enforce = aimd, enforce:delay = delay)." % (
              len(cells), len(ENGINES), len(arms), nseeds, len(jobs), wall, a.j), "",
          "Each verdict is the cell's worst seed against the off arm of the same cell, engine "
          "and seed. Thresholds: tests/matrix/run.py, table T.", ""]
    summary = []
    known, known_pass = known_failures(), []
    for prop in PROPS:
        md += ["## %s" % prop, "", DESC[prop], "",
               "| cell | " + " | ".join("%s %s" % c for c in cols) + " |",
               "|---|" + "---|" * len(cols)]
        for c in cells:
            cells_txt = []
            for e, law in cols:
                v = agg.get((c["name"], e, law, prop))
                if v is None:
                    cells_txt.append("no run")
                    fails[law] += 1
                elif not v[0]:
                    cells_txt.append("n/a")
                elif (prop, c["name"], e, law) in known:
                    cells_txt.append("%s %s" % ("PASS (listed known)" if v[1] else "KNOWN", v[2]))
                    if v[1]:
                        known_pass.append("%s %s %s %s" % (prop, c["name"], e, law))
                else:
                    cells_txt.append("%s %s" % ("PASS" if v[1] else "**FAIL**", v[2]))
                    if not v[1]:
                        fails[law] += 1
                        summary.append((law, prop, c["name"], e))
            md.append("| %s | %s |" % (c["name"], " | ".join(cells_txt)))
        md.append("")
    md += ["## Summary", ""]
    for law, _ in LAWS:
        bad = [s for s in summary if s[0] == law]
        md.append("- %s: %d failing (cell, engine) verdicts%s" % (
            law, len(bad), "" if not bad else ": " + "; ".join(
                "%s %s/%s" % (p, cl, e) for _, p, cl, e in bad)))
    md.append("- known failures (tests/matrix/known-failures.txt, not counted above): %d listed"
              % len(known))
    if known_pass:
        md.append("- listed as known but passing now (remove from the list): " +
                  "; ".join(known_pass))
    if errors:
        md += ["", "## Runs without a RESULT line", ""] + ["- `%s`" % e for e in errors]
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    if a.gnuplot:
        heatmaps(a.gnuplot, a.out, cells, agg)
    print("cc-matrix (%s): %d runs in %.0f s; failing verdicts: aimd %d, delay %d; report %s" % (
        tier, len(jobs), wall, fails["aimd"], fails["delay"], os.path.join(a.out, "report.md")))
    for prop in PROPS:
        bad = [s for s in summary if s[1] == prop]
        if bad:
            print("  %-10s FAIL: %s" % (prop, ", ".join("%s/%s/%s" % (cl, e, law)
                                                        for law, _, cl, e in bad)))
    for k in known_pass:
        print("  listed known failure passes now: %s" % k)
    for e in errors:
        print("run failed: " + e, file=sys.stderr)
    if a.report_only:
        return 0
    if errors:
        return 2
    if fails["aimd"] or (a.strict_delay and fails["delay"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
