#!/usr/bin/env python3
"""Write a man page from its template and the tool's own --help.

usage: man_page.py TEMPLATE OUT VERSION [HELP_COMMAND ...]

TEMPLATE (docs/man/*.in) is roff with @VERSION@ and, for a tool's page,
@OPTIONS@: replaced by the output of each HELP_COMMAND (a tool run with
--help; a command whose arguments are separated by spaces), verbatim, so
the page's options are the tool's and never drift from them. The build
runs this (CMake, target man); the test unit.man renders every page.
"""
import subprocess
import sys


def roff_verbatim(text):
    """Text as a no-fill block: backslashes escaped, a line starting with
    '.' or "'" protected, so roff shows it as written."""
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return ".nf\n.ft CR\n" + "\n".join(lines) + "\n.ft R\n.fi"


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    template, out, version, commands = argv[1], argv[2], argv[3], argv[4:]
    with open(template) as f:
        page = f.read()
    helps = []
    for command in commands:
        run = subprocess.run(command.split(" "), capture_output=True, text=True, timeout=60)
        if run.returncode != 0 or not run.stdout.strip():
            sys.exit("man_page.py: %r failed (exit %d): %s" % (command, run.returncode, run.stderr))
        helps.append(roff_verbatim(run.stdout))
    if "@OPTIONS@" in page:
        if not helps:
            sys.exit("man_page.py: %s has @OPTIONS@ but no help command was given" % template)
        page = page.replace("@OPTIONS@", "\n.PP\n".join(helps))
    page = page.replace("@VERSION@", version)
    with open(out, "w") as f:
        f.write(page)


if __name__ == "__main__":
    main(sys.argv)
