#!/usr/bin/env python3
"""One emulated machine of the machine-vm tier: boot it, run
guest_checks.sh inside, then compare what topsync-info detected there with
the expectation written here (a synthetic hwloc string for A and B, a
reference deal for C).

usage: machine_test.py MACHINE BUILD_DIR OUT [PARTICIPANTS EPISODES [PLAN]]
guest_checks.sh's plan: TOPSYNC_MACHINE_VM_PLAN (full, quick or detect)
when set, else PLAN, else quick. Prints PASS/FAIL lines; exit 0 when every check passed,
77 (skipped) when none failed but the guest was too slow to finish one (TOO SLOW).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine_vm  # noqa: E402


def synthetic(m):
    """hwloc synthetic string of machine m, PU numbers as Linux gives them."""
    base = m.expect
    if m.contiguous():
        return base
    # PU indexes in hwloc's logical order (socket, core, thread)
    indexes = [m.order.index((s, c, t)) for s in range(m.sockets) for c in range(m.cores)
               for t in range(m.threads)]
    return "%s(indexes=%s)" % (base, ",".join(map(str, indexes)))


def reference(m, map_by):
    """topsync-info's ranks and groups for machine C, np = cores, from the
    design's rules (design.md section 1) and the node table alone."""
    ncores = m.sockets * m.cores
    node_cores = [list(range(s * m.cores + f, s * m.cores + f + c))
                  for s, f, c, _ in m.nodes if c is not None]
    pack_cores = [list(range(s * m.cores, (s + 1) * m.cores)) for s in range(m.sockets)]
    if map_by == "core":
        cores = list(range(ncores))
    else:
        units = [list(u) for u in (node_cores if map_by == "numa" else pack_cores)]
        cores = []
        while len(cores) < ncores:
            for u in units:
                if u:
                    cores.append(u.pop(0))
    groups = []
    members = list(range(ncores))
    for level, units in (("NUMANode", node_cores), ("Package", pack_cores)):
        leaders = []
        for u in units:
            inside = [r for r in members if cores[r] in u]
            if inside:
                groups.append({"level": level, "leader": min(inside), "members": sorted(inside)})
                leaders.append(min(inside))
        members = sorted(leaders)
    groups.append({"level": "TOP", "leader": min(members), "members": members})
    return {"active_levels": ["NUMANode", "Package"],
            "ranks": [{"rank": r, "core": c} for r, c in enumerate(cores)],
            "groups": groups}


def expected(m, build, map_by, np):
    if m.expect:
        out = subprocess.run([os.path.join(build, "tools", "topsync-info"), "--topology",
                              synthetic(m), "--np", str(np), "--map-by", map_by, "--json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    return reference(m, map_by)


def compare(want, got):
    """The fields of want that got differs in."""
    diffs = []
    for key, value in want.items():
        if key == "topology":
            continue
        mine = got.get(key)
        if key == "ranks":  # the reference gives rank and core only
            mine = [{k: r.get(k) for k in value[0]} for r in mine or []]
            value = [{k: r.get(k) for k in value[0]} for r in value]
        if key == "groups":
            key_of = lambda g: (g["level"], g["leader"])  # noqa: E731
            mine, value = sorted(mine or [], key=key_of), sorted(value, key=key_of)
        if mine != value:
            diffs.append("%s: expected %s, detected %s" % (key, json.dumps(value)[:300],
                                                           json.dumps(mine)[:300]))
    return diffs


def main(argv):
    name, build, out = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    m = machine_vm.MACHINES[name]
    participants = int(argv[4]) if len(argv) > 4 and int(argv[4]) else m.npus
    episodes = int(argv[5]) if len(argv) > 5 else 10000
    plan = os.environ.get("TOPSYNC_MACHINE_VM_PLAN") or (argv[6] if len(argv) > 6 else "quick")
    if plan not in ("full", "quick", "detect"):
        print("FAIL: TOPSYNC_MACHINE_VM_PLAN=%r is not valid; valid: full, quick, detect" % plan)
        return 2
    rc = machine_vm.main(["machine_vm.py", name, out, "--",
                          os.path.join(HERE, "guest_checks.sh"), build, out,
                          str(participants), str(episodes), plan])
    # 77: no check failed, but one ran out of time while the guest slowed
    # down (guest_checks.sh: TOO SLOW lines): skipped unless the topology
    # comparison below fails
    too_slow = rc == 77
    failed = rc not in (0, 77)
    if rc == 125:
        return 1
    np = m.sockets * m.cores
    print("expected topology: %s" % (synthetic(m) if m.expect else
                                     "the reference deal over the node table (machine C)"))
    for map_by in ("core", "numa", "socket"):
        path = os.path.join(out, "info-%s.json" % map_by)
        try:
            got = json.load(open(path))
        except (OSError, ValueError) as e:
            print("FAIL: topology, map-by %s: no JSON from the guest (%s)" % (map_by, e))
            failed = True
            continue
        diffs = compare(expected(m, build, map_by, np), got)
        if diffs:
            failed = True
            for d in diffs:
                print("FAIL: topology, np %d map-by %s: %s" % (np, map_by, d))
        else:
            print("PASS: topology, np %d map-by %s: levels %s, %d groups as expected"
                  % (np, map_by, " ".join(got["active_levels"]), len(got["groups"])))
    if not failed and too_slow:
        print("machine %s: SKIPPED: the host was too busy for the guest to finish every check "
              "(the TOO SLOW lines above); no check failed" % name)
        return 77
    print("machine %s: %s" % (name, "FAIL" if failed else "all checks passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
