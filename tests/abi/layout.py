#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""layout.py BASELINE.abi CURRENT.abi - the append-only rule of ABI v1, on
two abidw corpora: every member of every mcc_ struct of the public headers
(plugin_api/*.h) in the baseline keeps its name, offset and type in the
current build, and a struct only grows by
members placed after its baseline size. abidiff reports function and
variable changes; this check is the precise one for struct layouts (abidiff's
"inserted at end" suppression also accepts a member inserted before the last
one). Exit 0 when the rule holds, 1 with one line per violation."""
import sys
import xml.etree.ElementTree as ET


def load(path):
    root = ET.parse(path).getroot()
    types = {}
    for el in root.iter():
        tid = el.get('id')
        if tid is not None:
            types[tid] = el
    structs = {}
    for el in root.iter('class-decl'):
        name = el.get('name', '')
        if not name.startswith('mcc_') or el.get('is-declaration-only') == 'yes':
            continue
        # only the public headers' structs: a module's own definitions of
        # the opaque handles (struct mcc_lane, ...) are never seen by hosts
        if not el.get('filepath', '').split('/')[-2:-1] == ['include']:
            continue
        members = []
        for dm in el.findall('data-member'):
            var = dm.find('var-decl')
            members.append((var.get('name'), int(dm.get('layout-offset-in-bits', '0')),
                            type_name(types, var.get('type-id'), 0)))
        structs[name] = (int(el.get('size-in-bits', '0')), members)
    return structs


def type_name(types, tid, depth):
    el = types.get(tid)
    if el is None or depth > 12:
        return '?'
    tag = el.tag
    if tag in ('type-decl', 'typedef-decl', 'class-decl', 'enum-decl', 'union-decl'):
        return el.get('name', '?')
    if tag == 'pointer-type-def':
        return type_name(types, el.get('type-id'), depth + 1) + '*'
    if tag == 'qualified-type-def':
        q = 'const ' if el.get('const') == 'yes' else ''
        q += 'volatile ' if el.get('volatile') == 'yes' else ''
        return q + type_name(types, el.get('type-id'), depth + 1)
    if tag == 'array-type-def':
        return '%s[%s]' % (type_name(types, el.get('type-id'), depth + 1),
                           el.get('size-in-bits', '?'))
    if tag == 'function-type':
        params = [type_name(types, p.get('type-id'), depth + 1)
                  for p in el.findall('parameter') if p.get('type-id')]
        ret = el.find('return')
        r = type_name(types, ret.get('type-id'), depth + 1) if ret is not None else 'void'
        return '%s(%s)' % (r, ','.join(params))
    return tag


def main():
    base, cur = load(sys.argv[1]), load(sys.argv[2])
    bad = []
    for name, (size, members) in sorted(base.items()):
        if name not in cur:
            continue  # no longer reachable from an exported symbol: abidiff's concern
        csize, cmembers = cur[name]
        now = {m[0]: m for m in cmembers}
        for m in members:
            c = now.get(m[0])
            if c is None:
                bad.append('%s: member %s removed' % (name, m[0]))
            elif c[1] != m[1]:
                bad.append('%s: member %s moved from bit %d to %d' % (name, m[0], m[1], c[1]))
            elif c[2] != m[2]:
                bad.append('%s: member %s changed type %s -> %s' % (name, m[0], m[2], c[2]))
        old = {m[0] for m in members}
        for c in cmembers:
            if c[0] not in old and c[1] < size:
                bad.append('%s: member %s inserted at bit %d, inside the baseline size %d'
                           % (name, c[0], c[1], size))
        if csize < size:
            bad.append('%s: shrank from %d to %d bits' % (name, size, csize))
    for b in bad:
        print('layout.py: ' + b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
