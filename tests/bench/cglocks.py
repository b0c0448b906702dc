#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cglocks.py - dynamic count of locked read-modify-write instructions in a
callgrind profile taken with --dump-instr=yes (object-relative addresses).

Usage: cglocks.py CALLGRIND_OUT...   prints "<total locked RMWs executed>"
per file, one per line. A locked RMW is an instruction objdump shows with a
`lock` prefix, or `xchg` with a memory operand (implicitly locked).
Counts are instruction executions, never time."""
import re
import subprocess
import sys

_NAME = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")


def _resolve(table, spec):
    m = _NAME.match(spec.strip())
    if not m:
        return spec.strip()
    if m.group(2):
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1), "?")


def _pos(tok, prev):
    if tok == "*":
        return prev
    if tok[0] in "+-":
        return prev + int(tok, 0)
    return int(tok, 0)


def parse(path):
    """{object: {address: self instruction executions}}"""
    obs = {}
    cost = {}
    ob = None
    addr = 0
    line = 0
    skip_next = False
    with open(path) as f:
        for raw in f:
            s = raw.rstrip("\n")
            if not s or s.startswith("#"):
                continue
            c = s[0]
            if c.isdigit() or c in "+-*":
                toks = s.split()
                addr = _pos(toks[0], addr)
                if len(toks) > 1:
                    line = _pos(toks[1], line)
                if skip_next:  # inclusive cost line of a call: not self cost
                    skip_next = False
                    continue
                if ob is not None and len(toks) > 2:
                    d = cost.setdefault(ob, {})
                    d[addr] = d.get(addr, 0) + int(toks[2])
                continue
            key, _, val = s.partition("=")
            if key == "ob":
                ob = _resolve(obs, val)
            elif key == "cob":
                _resolve(obs, val)
            elif key == "calls":
                skip_next = True
    return cost


def locked_addresses(obj):
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    res = set()
    for s in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", s)
        if not m:
            continue
        ins = m.group(2).strip()
        if re.match(r"^lock\b", ins) or (re.match(r"^xchg\w*\s", ins) and "(" in ins):
            res.add(int(m.group(1), 16))
    return res


def count(path):
    total = 0
    for obj, d in parse(path).items():
        if not obj.startswith("/"):
            continue
        locked = locked_addresses(obj)
        total += sum(n for a, n in d.items() if a in locked)
    return total


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(count(p))
