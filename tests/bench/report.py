#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py - bench-report/report.md (and PNG plots through gnuplot) from
what run-bench.sh collected in the report folder:
  identity.tsv    key<TAB>value: source, binaries, compiler, machine, command
  microbench.tsv  microbench -o output (raw runs, summaries, paired ratios)
  microbench.txt  its stdout
  callgrind.tsv   cgcount.sh output (instructions, locked RMWs per pair)
  e2e.json        e2e.py output (end-to-end arms and scenario ratios)
Ratios first, then absolute numbers. Targets are reported against, never
gated: this is a benchmark, not a test.

Usage: report.py OUTDIR [GNUPLOT]"""
import json
import os
import subprocess
import sys

OUT = sys.argv[1]
GNUPLOT = sys.argv[2] if len(sys.argv) > 2 else ""


def path(name):
    return os.path.join(OUT, name)


def read_tsv(name):
    rows = []
    try:
        with open(path(name)) as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    rows.append(line.split("\t"))
    except OSError:
        pass
    return rows


ident = {r[0]: r[1] if len(r) > 1 else "" for r in read_tsv("identity.tsv")}
mb = read_tsv("microbench.tsv")
mb_meta = {r[1]: r[2] for r in mb if r[0] == "meta"}
mb_sum = {(r[1], r[2], r[3]): tuple(map(float, r[4:7])) + (int(r[7]),) for r in mb if r[0] == "sum"}
mb_ratio = {(r[1], r[2], r[3]): tuple(map(float, r[4:7])) + (int(r[7]),)
            for r in mb if r[0] in ("ratio", "diff")}
mb_raw = {}
for r in mb:
    if r[0] == "raw":
        mb_raw.setdefault((r[1], r[2], r[3]), []).append(float(r[5]))
cg = {r[1]: (r[2], r[3], r[4]) for r in read_tsv("callgrind.tsv") if r[0] == "cg"}
try:
    with open(path("e2e.json")) as f:
        e2e = json.load(f)
except (OSError, ValueError):
    e2e = None

L = []
w = L.append


def fmt_stat(s, unit="", prec=3):
    if s is None:
        return "not measured"
    med, lo, hi, n = s
    return f"**{med:.{prec}f}{unit}** [{lo:.{prec}f}..{hi:.{prec}f}], {n} runs"


def verdict(ok):
    if ok is None:
        return "n/a"
    return "within" if ok else "**outside**"


w("# mcc benchmark report")
w("")
w("Benchmarks, not tests: nothing here gates on time. Targets (RFC \"Performance "
  "Acceptance\") are reported against. The only gate is "
  "`make check-bench-budget` (instruction counts).")
w("")
try:
    la = float(ident.get("loadavg_start", "0").split()[0])
    la_end = float(ident.get("loadavg_end", "0").split()[0])
    ncpu = int(ident.get("cpu", "x 1").rsplit("x", 1)[1])
except (ValueError, IndexError):
    la, la_end, ncpu = 0.0, 0.0, 1
if max(la, la_end) > 0.5 * ncpu:
    w(f"**Warning: this machine was busy** (load average {la:.1f} at the start, {la_end:.1f} "
      f"at the end, {ncpu} CPUs; see other_load). Timings are inflated and spread out, "
      "two-thread and threaded figures most; ratios from interleaved arms and the "
      "instruction counts are the figures to read.")
    w("")
w("## Identity")
w("")
for k in ("command", "date", "source_commit", "source_tree", "compiler", "cflags", "cppflags",
          "ldflags", "cpu", "cpus_online", "kernel", "loadavg_start", "loadavg_end",
          "other_load", "quick"):
    if k in ident:
        w(f"- {k}: `{ident[k]}`")
bins = [(k[4:], v) for k, v in ident.items() if k.startswith("bin:")]
if bins:
    w("- binaries (build id / sha256):")
    for k, v in bins:
        w(f"  - `{k}`: `{v}`")
w("")

# ------------------------------------------------------------ headline ratios
w("## Headline ratios")
w("")
w("Ratios are computed per repeat from arms interleaved in the same process "
  "(A B A B), then summarised: median [min..max] over the repeats. "
  "\"1T tight\" is the controller alone in a loop; \"ctx\" adds ~"
  f"{mb_meta.get('work_target_ns', '150')} ns of simulated per-WR work.")
w("")
w("| Figure | Measured | Target | |")
w("|---|---|---|---|")
for arm, label in (("aimd-rel", "aimd pair (acquire + release NOT_POSTED) / floor, exact mode"),
                   ("aimd-wc", "aimd pair (acquire + on_completion SUCCESS) / floor, exact mode"),
                   ("aimd-tick-rel", "aimd pair (release) / floor, after one tick (lane credit)"),
                   ("aimd-tick-wc", "aimd pair (completion) / floor, after one tick (lane credit)"),
                   ("aimd-cong-rel", "aimd pair (release) / floor, route CONGESTED, device in lane credit"),
                   ("aimd-cong-wc", "aimd pair (completion, congestion evidence) / floor, route CONGESTED, device in lane credit"),
                   ("observe-rel", "observe pair (release) / floor"),
                   ("observe-wc", "observe pair (completion) / floor"),
                   ("null-rel", "null pair (release) / floor"),
                   ("null-wc", "null pair (completion) / floor")):
    s = mb_ratio.get(("1T", "tight", f"{arm}/floor"))
    tgt = ("<= 0.5x" if "tick" in arm else "<= 1.3x") if arm.startswith("aimd") else ""
    ok = (s[0] <= (0.5 if "tick" in arm else 1.3)) if (s and arm.startswith("aimd")) else None
    w(f"| {label}, 1T tight | {fmt_stat(s, 'x')} | {tgt} | {verdict(ok) if tgt else ''} |")
    s = mb_ratio.get(("1T", "tight", f"{arm}/floor-add"))
    if s and arm.startswith("aimd"):
        w(f"| the same / floor-add (four `lock add`, no result tested), 1T tight | "
          f"{fmt_stat(s, 'x')} | | |")
for cfg in ("2T-shared", "2T-private"):
    for arm in ("aimd-wc", "aimd-tick-wc"):
        s = mb_ratio.get((cfg, "tight", f"{arm}/floor"))
        if s:
            w(f"| {arm} / floor, {cfg} tight | {fmt_stat(s, 'x')} | (<= 1.3x) "
              f"| {verdict(s[0] <= 1.3)} |")
for ctx in ("tight", "ctx"):
    s = mb_ratio.get(("1T", ctx, "off-compile-out"))
    ok = None if s is None else abs(s[0]) <= 1.0
    w(f"| off - compile-out, ns per slice, 1T {ctx} | {fmt_stat(s, ' ns')} | <= 1 ns | "
      f"{verdict(ok)} |")
for ctx in ("tight", "ctx"):
    s = mb_ratio.get(("1T", ctx, "null-wc-compile-out"))
    if s:
        w(f"| null module called through the vtable (hosts in mode off now skip it) "
          f"- compile-out, ns per slice, 1T {ctx} | {fmt_stat(s, ' ns')} | | |")
for arm in ("aimd-wc", "aimd-tick-wc"):
    for ctx in ("tight", "ctx"):
        s = mb_ratio.get(("1T", ctx, f"{arm}-compile-out"))
        if s:
            w(f"| {arm} - compile-out, ns per slice, 1T {ctx} | {fmt_stat(s, ' ns')} "
              f"| (target: <= 10 ns tight, <= 5 ns in context) | "
              f"{verdict(s[0] <= (10.0 if ctx == 'tight' else 5.0))} |")
if e2e and e2e.get("headline"):
    for h in e2e["headline"]:
        s = h.get("stat")
        tgt = h.get("target", "")
        ok = h.get("ok")
        w(f"| {h['label']} | {fmt_stat(tuple(s) if s else None, h.get('unit', ''), h.get('prec', 2))}"
          f" | {tgt} | {verdict(ok) if tgt else ''} |")
elif e2e is None:
    w("| end to end (off vs compile-out, enforce vs off) | not run: no e2e.json | "
      "<= 1% / <= 3% | n/a |")
w("")

# --------------------------------------------------------- instruction counts
w("## Instruction counts (valgrind --tool=callgrind)")
w("")
if cg:
    w("Per pair, single thread, 64 KiB slice, counted inside the measured loop "
      "function (`--toggle-collect`), (count at 2N - count at N) / N with N = "
      f"{next(iter(cg.values()))[2]}. Includes the loop's own instructions (see "
      "compile-out). Locked RMWs = executions of `lock`-prefixed instructions "
      "(and `xchg` with memory).")
    w("")
    w("| Arm | instructions / pair | locked RMW / pair | instructions over compile-out |")
    w("|---|---|---|---|")
    base = float(cg["compile-out"][0]) if "compile-out" in cg else None
    for arm, (ipp, lpp, _n) in cg.items():
        over = f"{float(ipp) - base:.1f}" if base is not None else "-"
        w(f"| {arm} | {float(ipp):.1f} | {lpp} | {over} |")
    w("")
    b = ident.get("budget")
    if b:
        # the arms of check-bench-budget (tests/bench/Makefile.inc)
        arms = ("aimd-rel", "aimd-wc", "aimd-tick-rel", "aimd-tick-wc", "aimd-cong-rel")
        worst = max((float(v[0]) for a, v in cg.items() if a in arms), default=None)
        if worst is not None:
            w(f"`make check-bench-budget` ({', '.join(arms)}): aimd pair {worst:.1f} "
              f"instructions against a budget of {b} "
              f"({'passes' if worst <= float(b) else 'FAILS'}).")
            w("")
else:
    w("Not measured (valgrind missing or callgrind step failed).")
    w("")

# ------------------------------------------------------- end-to-end figures
w("## End to end")
w("")
if e2e:
    for p in e2e.get("notes", []):
        w(p)
        w("")
    for t in e2e.get("tables", []):
        w(f"### {t['title']}")
        w("")
        w("| " + " | ".join(t["columns"]) + " |")
        w("|" + "---|" * len(t["columns"]))
        for row in t["rows"]:
            w("| " + " | ".join(str(c) for c in row) + " |")
        w("")
else:
    w("Not run (no e2e.json; see run-bench.sh output).")
    w("")

# ---------------------------------------------------------- absolute numbers
w("## Microbenchmark, absolute numbers (ns per pair)")
w("")
w(f"{mb_meta.get('runs', '?')} runs per arm; {mb_meta.get('pairs_tight', '?')} pairs per "
  f"tight run, {mb_meta.get('pairs_ctx', '?')} per ctx run; in-context work "
  f"{mb_meta.get('work_steps', '?')} LCG steps + one 64 B WQE write "
  f"(calibrated to ~{mb_meta.get('work_target_ns', '?')} ns); CPUs "
  f"{mb_meta.get('cpus', '?')}, pinning {mb_meta.get('pinning', '?')}; 2T runs report the "
  f"slower thread; {mb_meta.get('anomalies', '?')} anomalies (refusals or bytes left in "
  "flight); total "
  f"{mb_meta.get('elapsed_s', '?')} s.")
w("")
cfgs = [c for c in ("1T", "2T-shared", "2T-private") if any(k[0] == c for k in mb_sum)]
arms = []
for k in mb_sum:
    if k[2] not in arms:
        arms.append(k[2])
for ctx in ("tight", "ctx"):
    w(f"### {ctx}")
    w("")
    w("| Arm | " + " | ".join(cfgs) + " |")
    w("|---|" + "---|" * len(cfgs))
    for a in arms:
        cells = []
        for c in cfgs:
            s = mb_sum.get((c, ctx, a))
            if not s:
                cells.append("-")
                continue
            r = mb_ratio.get((c, ctx, f"{a}/floor"))
            cells.append(f"{s[0]:.2f} [{s[1]:.2f}..{s[2]:.2f}]" +
                         (f" ({r[0]:.2f}x)" if r else ""))
        w(f"| {a} | " + " | ".join(cells) + " |")
    w("")

w("## What these numbers can and cannot show")
w("")
w("- The microbenchmark measures the controller's CPU cost per slice, not "
  "end-to-end request latency (RFC: \"The CPU microbenchmark measures the "
  "controller, not end-to-end request p99\"). The two-thread figures depend on how "
  "this VM's two vCPUs are placed on the host and on whatever "
  "else runs on the machine (see loadavg above): read them as ratios to the floor "
  "measured in the same run, not as absolutes.")
w("- The fabric model is a deterministic software model of NICs, links and queues. "
  "It exercises the hosts' real code paths (hooks, permits, WC handling, queues) "
  "and shows the controller's decisions, queue bounds and recovery timing in model "
  "time. It cannot show NIC, PCIe, doorbell, cache or DCQCN behaviour, so its "
  "throughput is a model's, and CPU time per GiB there is the cost of the host "
  "code plus the model, not of a real NIC's verbs path.")
w("- Soft-RoCE (rdma_rxe, tests/softroce/) would put the same hooks on real verbs "
  "(ibv_post_send / ibv_poll_cq, real WC error codes and async events). It "
  "verifies software paths only: its throughput and latency are a kernel "
  "software NIC's, so it cannot qualify physical-HCA performance or fabric "
  "behaviour (RFC). The 1% / 3% end-to-end gates need a physical HCA pair with "
  "fixed firmware, placement, peer and interval.")
w("")

plots = []
if GNUPLOT and mb_raw:
    # ns per pair per arm (median, min, max) per config, one plot per context
    for ctx in ("tight", "ctx"):
        dat = path(f"microbench-{ctx}.dat")
        with open(dat, "w") as f:
            f.write("# arm " + " ".join(f"{c} {c}_min {c}_max" for c in cfgs) + "\n")
            for a in arms:
                vals = []
                for c in cfgs:
                    s = mb_sum.get((c, ctx, a), (0, 0, 0, 0))
                    vals += [f"{s[0]:.4f}", f"{s[1]:.4f}", f"{s[2]:.4f}"]
                f.write(a + " " + " ".join(vals) + "\n")
        png = f"microbench-{ctx}.png"
        cols = ", ".join(
            f"'{dat}' using {2 + 3 * i}:{3 + 3 * i}:{4 + 3 * i}:xtic(1) title '{c}'"
            for i, c in enumerate(cfgs))
        script = (f"set terminal pngcairo size 1100,500 noenhanced\nset output '{path(png)}'\n"
                  f"set title 'controller pair cost, {ctx} (median, min..max)'\n"
                  "set ylabel 'ns per pair'\nset style data histogram\n"
                  "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.6\n"
                  "set logscale y\nset yrange [0.1:*]\nset key top left\nset grid ytics\n"
                  "set xtics rotate by -30\n"
                  f"plot {cols}\n")
        plots.append((png, script))
    if e2e:
        for p in e2e.get("plots", []):
            plots.append((p["png"], p["script"].replace("@OUT@", OUT)))
made = []
for png, script in plots:
    try:
        subprocess.run([GNUPLOT], input=script, text=True, check=True, capture_output=True)
        made.append(png)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write(f"report.py: gnuplot failed for {png}: {e}\n")
w("## Plots")
w("")
if made:
    for png in made:
        w(f"![{png}]({png})")
        w("")
elif not GNUPLOT:
    w("No plots: gnuplot was not found by configure ($(GNUPLOT) empty).")
    w("")
else:
    w("No plots (gnuplot failed; see the make output).")
    w("")

with open(path("report.md"), "w") as f:
    f.write("\n".join(L) + "\n")
print(f"report.py: wrote {path('report.md')} and {len(made)} plot(s)")
