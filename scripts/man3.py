#!/usr/bin/env python3
"""Section-3 man pages of the public API, from the headers themselves.

usage: man3.py VERSION OUT_DIR HEADER...

One page per header (a function family, in Concurrency Kit's manner):
include/topsync/barrier.h gives topsync_barrier(3), whose NAME is the
first sentence of the header's leading comment, SYNOPSIS its #include and
every function's prototype, DESCRIPTION that comment, then one subsection
per function (its prototype and the comment above it, which says what it
guarantees and what it returns) and the header's types as declared. Each
function also gets a page of its own name that sources the family's
(`man topsync_barrier_create` works). The build runs this (CMake, target
man); unit.man3 checks that every function the libraries export has a
page. Nothing here is written by hand: the headers are the one source.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from man_page import roff_verbatim as verbatim  # noqa: E402 (the tools' pages' own)


def roff_text(text):
    """Prose as roff: escapes, and a line starting with '.' protected."""
    out = []
    for line in text.split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)




def comment_text(block):
    """The text of a /* ... */ comment, its stars and indentation gone."""
    body = block.strip()
    body = re.sub(r"^/\*+", "", body)
    body = re.sub(r"\*+/$", "", body)
    lines = [re.sub(r"^\s*\* ?", "", l) for l in body.split("\n")]
    return "\n".join(lines).strip()


def paragraphs(text):
    """Comment text as roff paragraphs (blank lines separate them)."""
    parts = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n.PP\n".join(roff_text(" ".join(p.split("\n"))) for p in parts)


def parse(path):
    """(leading comment, [(function, prototype, comment)], [type blocks])"""
    src = open(path).read()
    leading = re.match(r"\s*(/\*.*?\*/)", src, re.S)
    lead = comment_text(leading.group(1)) if leading else ""
    functions, types = [], []
    # comments and declarations in order, at the top level
    pos, last_comment, last_end = 0, None, 0
    token = re.compile(r"/\*.*?\*/|typedef\s+(?:struct|enum|union)\b[^;{]*\{.*?\}\s*\w+\s*;"
                       r"|typedef[^;{]*;|^[^#\n/][^;{}]*?\btopsync_\w+\s*\([^;{]*\)\s*;"
                       r"|^static inline[^{]*\{.*?^\}", re.S | re.M)
    for m in token.finditer(src):
        text = m.group(0)
        between = src[last_end:m.start()]
        if text.startswith("/*"):
            last_comment = comment_text(text)
            last_end = m.end()
            continue
        attached = last_comment if last_comment and not between.strip() else None
        if text.startswith("typedef"):
            types.append((text.strip(), attached))
        else:
            proto = text.split("{")[0].strip() if text.startswith("static inline") else text.strip()
            proto = re.sub(r"\s+", " ", proto)
            name = re.search(r"\b(topsync_\w+)\s*\(", proto)
            if name:
                functions.append((name.group(1), proto.rstrip(";") + ";", attached))
        last_comment, last_end = None, m.end()
    return lead, functions, types


def first_sentence(text):
    one = " ".join(text.split())
    m = re.match(r"(.+?[.:])(\s|$)", one)
    s = (m.group(1) if m else one).rstrip(".:")
    return s[0].lower() + s[1:] if s else s


def page(header, version, families):
    base = os.path.basename(header)[:-2]
    family = "topsync_" + base
    lead, functions, types = parse(header)
    link = {"mpi": "Link with -ltopsync-mpi-openmpi, -mpich or -abi (pkg-config --libs "
                   "topsync-mpi-IMPL), or preload it",
            "pthread": "Link with -ltopsync-pthread before libc (pkg-config --libs "
                       "topsync-pthread), or preload it"}.get(
        base, "Link with -ltopsync (pkg-config --libs topsync)")
    out = ['.TH %s 3 "" "topsync %s" "topsync"' % (family.upper(), version),
           ".SH NAME", "%s \\- %s" % (family, roff_text(first_sentence(lead) or base)),
           ".SH SYNOPSIS",
           verbatim("#include <topsync/%s.h>\n\n" % base +
                    "\n".join(p for _, p, _ in functions) +
                    "\n\n" + link),
           ".SH DESCRIPTION", paragraphs(lead) if lead else "",
           ".PP",
           "Every function that sets up or tears down returns 0 or a negative errno "
           "and leaves a message in",
           ".BR topsync_error_message ();",
           "the hot paths return nothing."]
    if functions:
        out.append(".SH FUNCTIONS")
        for name, proto, comment in functions:
            out += [".SS %s" % name, verbatim(proto)]
            if comment:
                out.append(paragraphs(comment))
    if types:
        out.append(".SH TYPES")
        for text, comment in types:
            if comment:
                out.append(paragraphs(comment))
            out.append(verbatim(text))
            out.append(".PP")
    others = sorted(f for f in families if f != family)
    out += [".SH SEE ALSO", ".BR topsync (7),"]
    out += [".BR %s (3)%s" % (f, "," if i < len(others) - 1 else "") for i, f in enumerate(others)]
    return family, "\n".join(l for l in out if l != "") + "\n", [n for n, _, _ in functions]


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    version, out_dir, headers = argv[1], argv[2], argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    families = ["topsync_" + os.path.basename(h)[:-2] for h in headers]
    names = []
    for h in headers:
        family, text, functions = page(h, version, families)
        with open(os.path.join(out_dir, family + ".3"), "w") as f:
            f.write(text)
        for fn in functions:
            if fn == family:
                continue
            with open(os.path.join(out_dir, fn + ".3"), "w") as f:
                f.write(".so man3/%s.3\n" % family)
        names += functions
    print("man3.py: %d pages, %d functions" % (len(headers), len(names)))


if __name__ == "__main__":
    main(sys.argv)
