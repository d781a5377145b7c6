#!/usr/bin/env python3
"""Counts the instructions of every loop of a kernel's SASS.

Usage: cuobjdump -sass KERNEL.cubin > KERNEL.sass; scripts/sass-loops.py KERNEL.sass

A loop is the code from a backward branch's target to the branch. Each line gives its
instructions, its FFMAs and the count of every other opcode (their first word, without
modifiers). The counts are static: a loop that holds several paths (a branch per operand
alignment, say) counts all of them. The cubin comes from ptxas (`ptxas -arch=sm_90 -e ENTRY
MODULE.ptx -o KERNEL.cubin`, launch bounds applied as the host applies them); cuobjdump
needs nvdisasm on the PATH.
"""
import collections
import re
import sys

ins = []
for line in open(sys.argv[1]):
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
    if not m:
        continue
    text = m.group(2).strip()
    op = re.sub(r'^@!?U?P\w+\s+', '', text).split()[0]
    ins.append((int(m.group(1), 16), op, text))
for addr, op, text in ins:
    if not op.startswith('BRA'):
        continue
    target = re.search(r'0x([0-9a-f]+)', text)
    if not target or int(target.group(1), 16) >= addr:
        continue
    start = int(target.group(1), 16)
    body = [o.split('.')[0] for a, o, _ in ins if start <= a <= addr]
    counts = collections.Counter(body)
    ffma = counts.pop('FFMA', 0)
    others = ', '.join(f'{k}:{v}' for k, v in counts.most_common())
    print(f'loop {start:#x}-{addr:#x}: {len(body)} instrs, FFMA {ffma}, other {len(body) - ffma}: {others}')
