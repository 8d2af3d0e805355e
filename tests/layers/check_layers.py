#!/usr/bin/env python3
"""The architecture of a library, checked: each folder is a layer and uses
only the layers before it (docs/design.md, "Layers").

usage: check_layers.py [--layers A,B,...] SRC_DIR [OBJECT_DIR]
  --layers: the folders in order (default: src/'s); a folder not named is
    no layer (an error for src/, beside the library for mpi/);
  - an #include of a private header from a later layer fails;
  - with OBJECT_DIR (the library's objects, as CMake builds them), a call or
    a data reference from one file to a name another file defines, going to
    a later layer, fails, and so does any loop of files by such references
    or by includes.
Prints every violation; exit 1 when there is one.
"""
import os
import re
import subprocess
import sys

LAYERS = ["base", "wait", "topology", "barrier", "model", "tune", "select", "collectives", "rcl", "front"]


def layer_of(path):
    """Layer index of a path relative to the library's folder
    (barrier/algorithms is barrier)."""
    top = path.split("/")[0]
    return LAYERS.index(top) if top in LAYERS else None


def sources(src):
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(root, f), src)


def include_edges(src):
    edges = []
    pattern = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for path in sources(src):
        with open(os.path.join(src, path)) as f:
            for name in pattern.findall(f.read()):
                if os.path.exists(os.path.join(src, name)):
                    edges.append((path, name))
    return edges


def symbol_edges(objects, src):
    """(file, file) for every name one object uses and another defines
    (objects whose source is no longer in src, left by a move, ignored)."""
    defined, used = {}, {}
    for root, _, files in os.walk(objects):
        for f in files:
            if not f.endswith(".o"):
                continue
            obj = os.path.join(root, f)
            # CMake names an object after its source, under the target's
            # folder: .../topsync_objects.dir/src/x/y.c.o for src/x/y.c,
            # .../topsync-mpi-mpich.dir/node/y.c.o for mpi/node/y.c
            rel = os.path.relpath(obj, objects)[:-2]
            candidates = [rel, rel.split("/", 1)[1] if "/" in rel else rel]
            source = next((c for c in candidates if os.path.exists(os.path.join(src, c))), None)
            if source is None:
                continue
            out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == "U":
                    used.setdefault(source, set()).add(parts[1])
                elif len(parts) == 3 and parts[1] in "TDBRGSVW":
                    defined[parts[2]] = source
    return [(a, defined[n], n) for a, names in used.items() for n in names
            if n in defined and defined[n] != a]


def loops(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    global LAYERS
    strict = True  # every file in a layer (src/); else files beside them are let be
    if len(argv) > 2 and argv[1] == "--layers":
        LAYERS = argv[2].split(",")
        strict = False
        argv = argv[:1] + argv[3:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = argv[1]
    bad = []
    for a, b in include_edges(src):
        la, lb = layer_of(a), layer_of(b)
        if (la is None or lb is None) and not strict:
            continue
        if la is None or lb is None:
            bad.append("%s: not in a layer folder (%s)" % (a if la is None else b, ", ".join(LAYERS)))
        elif lb > la:
            bad.append("upward include: %s (%s) includes %s (%s)" % (a, LAYERS[la], b, LAYERS[lb]))
    for comp in loops((a, b) for a, b in include_edges(src)):
        bad.append("loop of includes: %s" % " -> ".join(comp))
    if len(argv) > 2:
        edges = symbol_edges(argv[2], src)
        if not edges:
            bad.append("no object of %s under %s" % (src, argv[2]))
        for a, b, name in sorted(set(edges)):
            la, lb = layer_of(a), layer_of(b)
            if la is not None and lb is not None and lb > la:
                bad.append("upward reference: %s (%s) uses %s of %s (%s)"
                           % (a, LAYERS[la], name, b, LAYERS[lb]))
        for comp in loops((a, b) for a, b, _ in edges):
            bad.append("loop of files by references: %s" % ", ".join(comp))
    for line in sorted(set(bad)):
        print("FAIL: " + line)
    if not bad:
        print("layers: %s; no upward include or reference, no loop" % " < ".join(LAYERS))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
