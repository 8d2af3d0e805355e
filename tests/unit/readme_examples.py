#!/usr/bin/env python3
"""Every ```c block of the README and of the user guide (further markdown
files after the examples' directory) is a part of a program under examples/
that the tests build and run: the lines between a "README: begin NAME"
and the next "README: end" marker, with their common indentation removed.
A block may join several such parts (one after another, in file order),
separated in the README by a line holding only "...". Fails naming the
block that no example holds."""
import re
import sys
import textwrap
from pathlib import Path

readme, examples = Path(sys.argv[1]), Path(sys.argv[2])
documents = [readme] + [Path(p) for p in sys.argv[3:]]
blocks = [b for d in documents for b in re.findall(r"```c\n(.*?)```", d.read_text(), re.S)]
parts = []
for path in sorted(examples.glob("*.c")):
    lines = path.read_text().splitlines()
    start = None
    for i, line in enumerate(lines):
        if "README: begin" in line:
            start = i + 1
        elif "README: end" in line and start is not None:
            parts.append(textwrap.dedent("\n".join(lines[start:i])).strip("\n"))
            start = None
failed = 0
if not blocks:
    print("FAILED: no ```c block in the README or the guide")
    failed += 1
for n, block in enumerate(blocks, 1):
    pieces = [textwrap.dedent(p).strip("\n") for p in re.split(r"\n\.\.\.\n", block.strip("\n") + "\n")]
    missing = [p for p in pieces if p.strip() and p not in parts]
    if missing:
        failed += 1
        print(f"FAILED: C block {n} (README, then the guide) is not a marked part of examples/*.c:\n{missing[0]}\n")
print(f"{len(blocks) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
