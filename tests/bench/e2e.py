#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""e2e.py - end-to-end arms of `make bench` on the fabric model.

Arms: compile-out (tests/bench/e2e_host_nocc, hooks compiled out), off,
observe, enforce (tests/bench/e2e_host, hooks compiled in, mode from an ini
file). Every run is its own process (independent process, queue and
connection state), same message size, placement and interval; arms are
interleaved A B C D, A B C D ... with the start rotated per repeat. CPU time
is the child's rusage (os.wait4). Workloads: small messages (4 KiB) and large
transfers (1 MiB of 64 KiB slices), under the sim executor (model time:
deterministic decisions; real CPU) and the threaded executor (real time).
Scenario figures (healthy bulk, incast, route recovery = flap, multi-NIC failure) come
from the scenario runner (host_stubs/te/te_host --machine), one process per
arm, as ratios of enforce against off.

Writes OUT/e2e.json (read by report.py), OUT/e2e-raw.tsv and OUT/e2e*.dat.
A benchmark: it never fails on a figure, only when it cannot run."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--builddir", required=True)
ap.add_argument("--srcdir", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--quick", action="store_true")
ap.add_argument("--reps", type=int, default=0)
args = ap.parse_args()
B = args.builddir
OUT = args.out
MOD = os.path.join(B, "modules", ".libs")
HOST = os.path.join(B, "tests", "bench", "e2e_host")
HOST_NOCC = os.path.join(B, "tests", "bench", "e2e_host_nocc")
RUNNER = os.path.join(B, "host_stubs", "te", "te_host")
Q = args.quick
REPS = args.reps or (3 if Q else 7)
SCN_REPS = 1 if Q else 2
GIB = float(1 << 30)

ENV = {k: v for k, v in os.environ.items() if not k.startswith("MC_ADAPTIVE_CC_")}
try:
    CPUS = sorted(os.sched_getaffinity(0))
except AttributeError:
    CPUS = []
SIM_CPU = {CPUS[1]} if len(CPUS) > 1 else (set(CPUS) or None)

MODULES = {"off": None, "observe": "mcc-policy-observe.so", "enforce": "mcc-policy-aimd.so"}
ARMS = ["compile-out", "off", "observe", "enforce"]
notes = []
available = []
for a in ARMS:
    exe = HOST_NOCC if a == "compile-out" else HOST
    mod = MODULES.get(a)
    if not os.access(exe, os.X_OK):
        notes.append(f"Arm `{a}` not run: {exe} is missing.")
    elif mod and not os.path.exists(os.path.join(MOD, mod)):
        notes.append(f"Arm `{a}` not run: module {mod} is not built in {MOD}.")
    else:
        available.append(a)

WORKLOADS = [
    # name, exec, msg, conc, duration (s: model time for sim, real for threaded)
    ("small 4 KiB, sim", "sim", 4096, 16, 0.02 if Q else 0.08),
    ("large 1 MiB (64 KiB slices), sim", "sim", 1 << 20, 8, 0.04 if Q else 0.16),
    ("small 4 KiB, threaded", "threaded", 4096, 16, 0.15 if Q else 0.4),
    ("large 1 MiB (64 KiB slices), threaded", "threaded", 1 << 20, 8, 0.15 if Q else 0.4),
]


def run_child(cmd, pin):
    """Run one arm; return (stdout, rc, cpu_ms of the child from wait4)."""
    def pre():
        if pin:
            try:
                os.sched_setaffinity(0, pin)
            except OSError:
                pass
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                         preexec_fn=pre)
    out = p.stdout.read().decode(errors="replace")
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    cpu = (ru.ru_utime + ru.ru_stime) * 1e3
    return out, err, p.returncode, cpu, ru.ru_maxrss


def host_cmd(arm, ex, msg, conc, dur):
    """The e2e host's command line for one arm and workload."""
    cmd = [HOST_NOCC] if arm == "compile-out" else [HOST, "--mode", arm, "--module-dir", MOD]
    return cmd + ["--msg", str(msg), "--conc", str(conc), "--duration", str(dur),
                  "--exec", ex, "--devs", "2", "--seed", "1"]


def result_line(out, tag):
    """The first line of a child's output that starts with `tag`."""
    return next((l for l in out.splitlines() if l.startswith(tag + " ")), None)


def kv(line, tag):
    d = {}
    for tok in line.split()[1:]:
        k, _, v = tok.partition("=")
        try:
            d[k] = float(v) if any(c in v for c in ".e") or v.lstrip("-").isdigit() else v
        except ValueError:
            d[k] = v
        if isinstance(d[k], float) and v.lstrip("-").isdigit():
            d[k] = int(v)
    return d


def run_result(cmd, pin, tag, what):
    """Run one arm (run_child); its `tag` line parsed (kv), the line, rc, CPU
    ms and max RSS; None, with a note on `what`, when it printed none."""
    out, err, rc, cpu, rss = run_child(cmd, pin)
    line = result_line(out, tag)
    if line is None:
        notes.append(f"{what}: no result (rc {rc}): {err.strip()[-200:]}")
        return None
    return kv(line, tag), line, rc, cpu, rss


raw_lines = []
results = {}  # (workload, arm) -> list of dicts (index = rep)
cmds = {}
t0 = time.time()
for wname, ex, msg, conc, dur in WORKLOADS:
    for r in range(REPS):
        k = r % len(available) if available else 0
        for arm in available[k:] + available[:k]:
            cmd = host_cmd(arm, ex, msg, conc, dur)
            cmds[(wname, arm)] = " ".join(shlex.quote(c) for c in cmd)
            got = run_result(cmd, SIM_CPU if ex == "sim" else None, "E2E",
                             f"`{wname}` / `{arm}` rep {r}")
            if not got:
                continue
            d, line, rc, cpu, rss = got
            d["rc"] = rc
            d["child_cpu_ms"] = cpu
            d["maxrss_kib"] = rss
            gib = d["bytes_ok"] / GIB if d.get("bytes_ok") else 0
            d["cpu_per_gib_ms"] = cpu / gib if gib else float("nan")
            d["run_cpu_per_gib_ms"] = d["run_cpu_ms"] / gib if gib else float("nan")
            d["real_gbps"] = d["bytes_ok"] * 8 / d["wall_s"] / 1e9 if d.get("wall_s") else 0
            d["rep"] = r
            results.setdefault((wname, arm), []).append(d)
            raw_lines.append(f"{wname}\t{arm}\t{r}\t{line}\tchild_cpu_ms={cpu:.3f}")
            if arm != "compile-out" and d.get("cc") != arm:
                notes.append(f"`{wname}` / `{arm}` rep {r}: controller in force was "
                             f"`{d.get('cc')}`, not `{arm}` (run kept, flagged).")
e2e_s = time.time() - t0


def stat(v):
    v = [x for x in v if x == x]
    if not v:
        return None
    return [statistics.median(v), min(v), max(v), len(v)]


def paired(wname, a, b, key, worse_if_higher):
    """Per-rep regression of arm a against arm b in %, positive = worse."""
    ra = {d["rep"]: d for d in results.get((wname, a), [])}
    rb = {d["rep"]: d for d in results.get((wname, b), [])}
    v = []
    for rep in sorted(set(ra) & set(rb)):
        x, y = ra[rep].get(key), rb[rep].get(key)
        if not x or not y or x != x or y != y:
            continue
        v.append((x / y - 1) * 100 if worse_if_higher else (1 - x / y) * 100)
    return stat(v)


headline = []


def add_head(label, s, target=None, limit=None, unit=" %", prec=2):
    h = {"label": label, "stat": s, "unit": unit, "prec": prec}
    if target:
        h["target"] = target
        h["ok"] = None if s is None or limit is None else s[0] <= limit
    headline.append(h)


for wname, ex, msg, conc, dur in WORKLOADS:
    if ex == "sim":
        add_head(f"off vs compile-out, CPU per GiB (child rusage), {wname}",
                 paired(wname, "off", "compile-out", "cpu_per_gib_ms", True),
                 "<= 1% regression", 1.0)
    else:
        add_head(f"off vs compile-out, throughput (real time), {wname}",
                 paired(wname, "off", "compile-out", "real_gbps", False),
                 "<= 1% regression", 1.0)
for wname, ex, msg, conc, dur in WORKLOADS:
    key = "goodput_gbps" if ex == "sim" else "real_gbps"
    what = "throughput (model time)" if ex == "sim" else "throughput (real time)"
    tgt = "<= 3% regression" if msg >= (1 << 20) else None
    add_head(f"enforce vs off, {what}, {wname}", paired(wname, "enforce", "off", key, False),
             tgt, 3.0 if tgt else None)
for wname, ex, msg, conc, dur in WORKLOADS:
    if ex == "sim":
        add_head(f"enforce vs off, CPU per GiB (child rusage), {wname}",
                 paired(wname, "enforce", "off", "cpu_per_gib_ms", True))
        add_head(f"observe vs off, CPU per GiB (child rusage), {wname}",
                 paired(wname, "observe", "off", "cpu_per_gib_ms", True))

# ------------------------------------- instructions per GiB (sim, callgrind)
# The sim executor is single-threaded and deterministic, so callgrind's
# instruction count of a run is exact: (count at 2d - count at d) divided by
# the extra verified bytes is the steady-state cost per GiB, noise-free.
VALGRIND = os.environ.get("VALGRIND", "")
insn = {}  # (workload, arm) -> instructions per GiB
t2 = time.time()


def cg_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    return None


if VALGRIND:
    import tempfile
    tmpd = tempfile.mkdtemp(prefix="mcc-e2e-cg.")
    for wname, ex, msg, conc, dur in WORKLOADS:
        if ex != "sim":
            continue
        d1 = (0.004 if Q else 0.01) if msg < (1 << 20) else (0.01 if Q else 0.03)
        for arm in available:
            pts = []
            for k, d in ((1, d1), (2, 2 * d1)):
                cgo = os.path.join(tmpd, f"cg.{len(insn)}.{k}")
                out, err, rc, cpu, rss = run_child(
                    [VALGRIND, "--tool=callgrind", f"--callgrind-out-file={cgo}"] +
                    host_cmd(arm, "sim", msg, conc, d), SIM_CPU)
                line = result_line(out, "E2E")
                tot = cg_total(cgo) if os.path.exists(cgo) else None
                if line is None or tot is None:
                    notes.append(f"callgrind `{wname}` / `{arm}`: failed (rc {rc})")
                    break
                pts.append((tot, kv(line, "E2E")["bytes_ok"]))
                os.unlink(cgo)
            if len(pts) == 2 and pts[1][1] > pts[0][1]:
                insn[(wname, arm)] = (pts[1][0] - pts[0][0]) / ((pts[1][1] - pts[0][1]) / GIB)
    try:
        os.rmdir(tmpd)
    except OSError:
        pass
cg_s = time.time() - t2
for wname, ex, msg, conc, dur in WORKLOADS:
    for a, b, tgt, lim in (("off", "compile-out", "<= 1% regression", 1.0),
                           ("enforce", "off", None, None), ("observe", "off", None, None)):
        x, y = insn.get((wname, a)), insn.get((wname, b))
        if x and y:
            v = (x / y - 1) * 100
            add_head(f"{a} vs {b}, instructions per GiB (callgrind, exact), {wname}",
                     [v, v, v, 1], tgt, lim)

# ----------------------------------------------------------- scenario runner
scn = {}  # (scenario, arm) -> list of dicts
scn_arms = [a for a in ("off", "observe", "enforce") if a in available]
scn_cmds = {}
t1 = time.time()
if os.access(RUNNER, os.X_OK) and scn_arms:
    for name in ("healthy", "incast", "flap", "multinic"):
        for r in range(SCN_REPS):
            k = r % len(scn_arms)
            for arm in scn_arms[k:] + scn_arms[:k]:
                cmd = [RUNNER, "--machine", "--scenario", name, "--arms", arm, "--engine", "te",
                       "--exec", "sim", "--seed", "1", "--module-dir", MOD]
                if Q:
                    cmd.append("--quick")
                scn_cmds[(name, arm)] = " ".join(shlex.quote(c) for c in cmd)
                got = run_result(cmd, SIM_CPU, "RESULT", f"scenario `{name}` / `{arm}`")
                if not got:
                    continue
                d, line, _, cpu, _ = got
                d["child_cpu_ms"] = cpu
                d["rep"] = r
                scn.setdefault((name, arm), []).append(d)
                raw_lines.append(f"scenario {name}\t{arm}\t{r}\t{line}\tchild_cpu_ms={cpu:.3f}")
else:
    notes.append("Scenario figures not run: the scenario runner "
                 f"({RUNNER}) or the off/enforce arms are unavailable.")
scn_s = time.time() - t1


def scn_ratio(name, key, a="enforce", b="off"):
    ra = {d["rep"]: d for d in scn.get((name, a), [])}
    rb = {d["rep"]: d for d in scn.get((name, b), [])}
    v = [ra[k][key] / rb[k][key] for k in sorted(set(ra) & set(rb))
         if isinstance(ra[k].get(key), (int, float)) and rb[k].get(key)]
    return stat(v)


SCN_FIGS = [
    ("incast", "goodput", "incast: bulk goodput, enforce / off"),
    ("incast", "p99", "incast: small-message victim p99 latency, enforce / off"),
    ("incast", "qpeak", "incast: switch queue peak, enforce / off"),
    ("incast", "qsteady", "incast: switch queue peak in steady state (last 40 %), enforce / off"),
    ("incast", "pause", "incast: PFC pause time, enforce / off"),
    ("healthy", "goodput", "healthy bulk (scenario, 8 x 4 MiB): goodput (model time), enforce / off"),
    ("flap", "goodput", "route recovery (link flap): goodput, enforce / off"),
    ("flap", "p999", "route recovery (link flap): p999 latency, enforce / off"),
    ("multinic", "goodput", "multi-NIC failure: goodput, enforce / off"),
    ("multinic", "p99", "multi-NIC failure: p99 latency, enforce / off"),
]
for name, key, label in SCN_FIGS:
    s = scn_ratio(name, key)
    if s:
        add_head(label, s, unit="x", prec=3)

# ------------------------------------------------------------------- tables
tables = []


def fmt(s, prec=2):
    if not s:
        return "-"
    return f"{s[0]:.{prec}f} [{s[1]:.{prec}f}..{s[2]:.{prec}f}]"


for wname, ex, msg, conc, dur in WORKLOADS:
    rows = []
    for arm in ARMS:
        v = results.get((wname, arm))
        if not v:
            continue
        g = lambda k: stat([d.get(k, float("nan")) for d in v])  # noqa: E731
        tot = lambda k: sum(int(d.get(k, 0)) for d in v)  # noqa: E731
        cc = sorted({str(d.get("cc")) for d in v})
        states = sorted({str(d.get("states")) for d in v})
        rows.append([arm, ",".join(cc), len(v),
                     fmt(g("goodput_gbps" if ex == "sim" else "real_gbps")),
                     fmt(g("cpu_per_gib_ms"), 1), fmt(g("run_cpu_per_gib_ms"), 1),
                     fmt(g("p50_us"), 1), fmt(g("p99_us"), 1), fmt(g("p999_us"), 1),
                     fmt(g("qpeak"), 0), f"{tot('defers')}/{tot('avoids')}",
                     f"{tot('corrupt')}/{tot('lost')}/{tot('leaked')}/{tot('tasks_failed')}",
                     fmt(g("inflight_end"), 0),
                     f"{tot('tasks_ok')}", " ".join(states)[:60]])
    if rows:
        unit = "Gb/s (model time)" if ex == "sim" else "Gb/s (real time)"
        tables.append({
            "title": f"{wname}: {msg} B transfers, {conc} outstanding, 2 NICs per side, "
                     f"{dur} s {'model' if ex == 'sim' else 'real'} time per run",
            "columns": ["arm", "controller in force", "runs", unit,
                        "CPU ms/GiB (child)", "CPU ms/GiB (run only)", "p50 us", "p99 us",
                        "p999 us", "queue peak B", "defers/avoids",
                        "corrupt/lost/leaked permits/failed", "domain bytes at end (lane credit)",
                        "tasks verified", "route states"],
            "rows": rows})
srows = []
for name in ("healthy", "incast", "flap", "multinic"):
    for arm in scn_arms:
        v = scn.get((name, arm))
        if not v:
            continue
        g = lambda k: stat([d.get(k, float("nan")) for d in v])  # noqa: E731
        d0 = v[0]
        srows.append([name, arm, len(v), fmt(g("goodput")), fmt(g("p50"), 1), fmt(g("p99"), 1),
                      fmt(g("p999"), 1), fmt(g("qpeak"), 0), fmt(g("qsteady"), 0), fmt(g("pause"), 2),
                      f"{d0.get('defers')}/{d0.get('avoids')}", f"{d0.get('quar')}/{d0.get('probes')}",
                      f"{d0.get('lost')}/{d0.get('corrupt')}/{d0.get('leaked')}",
                      str(d0.get("timeline"))[:60]])
if insn:
    irows = []
    for wname, ex, msg, conc, dur in WORKLOADS:
        base = insn.get((wname, "compile-out"))
        for arm in ARMS:
            x = insn.get((wname, arm))
            if x:
                irows.append([wname, arm, f"{x / 1e6:.1f}",
                              f"{(x / base - 1) * 100:+.2f} %" if base else "-"])
    tables.append({
        "title": "Instructions per GiB verified, end to end (sim executor, callgrind; "
                 "whole process: host stub, model, payload copy and checksum included)",
        "columns": ["workload", "arm", "M instructions / GiB", "vs compile-out"],
        "rows": irows})
if srows:
    tables.append({
        "title": "Scenarios (scenario runner, TE host, sim executor, one process per arm)",
        "columns": ["scenario", "arm", "runs", "goodput Gb/s", "p50 us", "p99 us", "p999 us",
                    "queue peak B", "steady queue peak B", "pause ms", "defers/avoids",
                    "quarantines/probes",
                    "lost/corrupt/leaked", "watched route states"],
        "rows": srows})

notes.insert(0, (
    f"{REPS} repeats per arm and workload, interleaved; scenarios {SCN_REPS} repeat(s) per arm. "
    "Each run is a fresh process. Sim runs are pinned to one CPU; model-time throughput "
    "and latency there are deterministic for a seed (the controller's decisions, not "
    "the CPU's speed, set them), while CPU per GiB is the child's real rusage (setup "
    "included; \"run only\" excludes setup). Threaded runs use both CPUs in real time "
    "and are as noisy as this machine. The off arm is what the host stubs do with "
    "mode = off: hooks compiled in, every hook skipped on one branch read at worker "
    "construction (RFC: off bypasses policy and admission state; no module call, no "
    f"admits). Elapsed: arms {e2e_s:.0f} s, callgrind {cg_s:.0f} s, "
    f"scenarios {scn_s:.0f} s."))
cmdnotes = ["Exact commands (one per arm; `--seed 1`):", ""]
for (wname, arm), c in sorted(cmds.items()):
    cmdnotes.append(f"- {wname} / {arm}: `{c}`")
for (name, arm), c in sorted(scn_cmds.items()):
    cmdnotes.append(f"- scenario {name} / {arm}: `{c}`")
notes.append("\n".join(cmdnotes))

# -------------------------------------------------------------------- plots
plots = []
dat = os.path.join(OUT, "e2e.dat")
with open(dat, "w") as f:
    f.write("# workload arm cpu_per_gib med min max\n")
    for i, (wname, ex, msg, conc, dur) in enumerate(WORKLOADS):
        for arm in ARMS:
            v = results.get((wname, arm))
            if not v:
                continue
            s = stat([d["cpu_per_gib_ms"] for d in v])
            t = stat([d["goodput_gbps" if ex == "sim" else "real_gbps"] for d in v])
            if not s or not t:  # no finite figure (nothing verified): no bar
                continue
            short = ("small" if msg < (1 << 20) else "large") + "-" + ex
            f.write(f"\"{short}/{arm}\" {s[0]:.3f} {s[1]:.3f} {s[2]:.3f} "
                    f"{t[0]:.4f} {t[1]:.4f} {t[2]:.4f}\n")
if results:
    for name, title, ylabel, cols in (
            ("e2e-cpu.png", "end to end: CPU ms per GiB verified (median, min..max)",
             "CPU ms / GiB", "2:3:4"),
            ("e2e-throughput.png",
             "end to end: throughput, Gb/s (sim: model time; threaded: real time)", "Gb/s",
             "5:6:7")):
        png = os.path.join(OUT, name)
        plots.append({"png": name, "script": (
            f"set terminal pngcairo size 1100,550 noenhanced\nset output '{png}'\n"
            f"set title '{title}'\n"
            "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
            "set style fill solid 0.6\nset xtics rotate by -35 font ',8'\nset grid ytics\n"
            f"set ylabel '{ylabel}'\nset key off\n"
            f"plot '{dat}' using {cols}:xtic(1)\n")})

with open(os.path.join(OUT, "e2e-raw.tsv"), "w") as f:
    f.write("\n".join(raw_lines) + "\n")
with open(os.path.join(OUT, "e2e.json"), "w") as f:
    json.dump({"headline": headline, "tables": tables, "notes": notes, "plots": plots,
               "reps": REPS, "arms": available}, f, indent=1)
print(f"e2e.py: {len(raw_lines)} runs in {e2e_s + scn_s:.0f} s; wrote {OUT}/e2e.json")
for h in headline:
    s = h["stat"]
    print(f"  {h['label']}: " + ("-" if not s else
          f"{s[0]:.{h['prec']}f}{h['unit']} [{s[1]:.{h['prec']}f}..{s[2]:.{h['prec']}f}] n={s[3]}"))
