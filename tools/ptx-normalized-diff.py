#!/usr/bin/env python3
"""Compares two PTX modules entry by entry after normalizing what a
refactor may renumber without changing the code: register numbers
(%r123 -> %r), labels ($L__BB0_7 -> L), anonymous globals' names, comments
and blank lines. Prints, per entry, the line counts and how many lines
differ; exits 1 if any entry differs.

Usage: tools/ptx-normalized-diff.py BEFORE.ptx AFTER.ptx [--show N]
  --show N   print the first N differing lines of each differing entry

Panic locations (`.global ... anon_... = {..., line/column}`) sit outside
the entries: their line numbers move with the source and are not compared.
"""
import difflib
import re
import sys


def entries(path):
    """{entry name: normalized lines} of a PTX module."""
    out, cur = {}, None
    for line in open(path).read().split("\n"):
        m = re.match(r"\.visible \.entry (\w+)\(", line)
        if m:
            cur = m.group(1)
            out[cur] = []
        if cur is None:
            continue
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        s = re.sub(r"%(r|rd|p|f|fd|rs|h|hh)\d+", r"%\1", s)
        s = re.sub(r"\$L__\w+", "L", s)
        s = re.sub(r"anon_\$_\w+", "ANON", s)
        out[cur].append(s)
    return out


def main():
    args = sys.argv[1:]
    show = 0
    if "--show" in args:
        i = args.index("--show")
        show = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    before, after = entries(args[0]), entries(args[1])
    differ = False
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b is None or a is None:
            print(f"{name}: only in {'after' if b is None else 'before'}")
            differ = True
            continue
        diff = [l for l in difflib.unified_diff(b, a, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
        print(f"{name}: {len(b)} -> {len(a)} lines, {len(diff)} differing")
        if diff:
            differ = True
            for l in diff[:show]:
                print("   ", l)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
