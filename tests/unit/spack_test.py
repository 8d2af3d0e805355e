#!/usr/bin/env python3
"""The Spack recipes in packaging/spack, checked for what made Spack fail
on them (issue 55): the directory is a Spack repository (repo.yaml with a
namespace); topsync's recipe has a fetch source for every version (git or
url, and a branch, tag, commit or checksum per version); every dependency
names the project it means (Spack's builtin `ck` is a Java tool, not
Concurrency Kit: a dependency must be one this check lists after reading
Spack's recipe for it, or a package of this repository); every CMake
option passed exists, every variant read is declared and each variant
reaches CMake; no host path (the test matrix's /var/cache) is passed.
With --self-test, a copy of the repository with each defect put back in
must fail. When Spack is installed (`spack` on PATH, or TOPSYNC_SPACK),
`spack audit packages` and `spack info` run on the recipes too.

usage: spack_test.py [--self-test] SOURCE_DIR
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Dependencies whose Spack package is the project topsync means (checked
# against Spack's builtin recipes by hand; packaging/spack's own packages
# are accepted as they are).
KNOWN = {
    "c": "the C compiler (Spack's language virtual)",
    "cmake": "CMake",
    "pkgconfig": "pkg-config (virtual: pkgconf, pkg-config)",
    "hwloc": "hwloc (open-mpi/hwloc)",
    "mpi": "an MPI library (virtual)",
    "python": "Python",
    "gmake": "GNU make",
}


def calls_of(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def name(call):
    return getattr(call.func, "id", None) or getattr(call.func, "attr", None)


def first_string(call):
    return call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None


def keyword(call, key):
    for k in call.keywords:
        if k.arg == key and isinstance(k.value, ast.Constant):
            return k.value.value
    return None


def class_attributes(cls):
    out = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Constant):
            out[node.targets[0].id] = node.value.value
    return out


def cmake_options(src):
    options = set()
    for root, _, files in os.walk(src):
        if "/build" in root or "/.git" in root:
            continue
        for f in files:
            if f == "CMakeLists.txt":
                text = open(os.path.join(root, f)).read()
                options |= set(re.findall(r"option\((TOPSYNC_[A-Z0-9_]+)", text))
                options |= set(re.findall(r"set\((TOPSYNC_[A-Z0-9_]+) [^)]*CACHE", text))
    return options


def check(src):
    """What is wrong with the recipes under src, as sentences."""
    failed = []
    repo = os.path.join(src, "packaging/spack")
    repo_yaml = os.path.join(repo, "repo.yaml")
    if not os.path.exists(repo_yaml):
        failed.append("packaging/spack has no repo.yaml: `spack repo add packaging/spack` fails")
    elif not re.search(r"^\s*namespace:\s*\S+", open(repo_yaml).read(), re.M):
        failed.append("packaging/spack/repo.yaml names no namespace")
    ours = set(os.listdir(os.path.join(repo, "packages")))
    path = os.path.join(repo, "packages/topsync/package.py")
    tree = ast.parse(open(path).read(), path)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Topsync"]
    if not classes or not any(getattr(b, "id", "") == "CMakePackage" for b in classes[0].bases):
        return failed + ["no class Topsync(CMakePackage)"]
    cls = classes[0]
    attributes = class_attributes(cls)
    calls = calls_of(cls)
    if not attributes.get("homepage"):
        failed.append("no homepage")
    versions = [c for c in calls if name(c) == "version"]
    if not versions:
        failed.append("no version()")
    for v in versions:
        git_ref = any(keyword(v, k) for k in ("branch", "tag", "commit"))
        checksum = keyword(v, "sha256") or (len(v.args) > 1 and isinstance(v.args[1], ast.Constant))
        if git_ref and not attributes.get("git"):
            failed.append("version %r is a git %s but the recipe has no `git`: Spack cannot "
                          "guess a fetch strategy" % (first_string(v), "reference"))
        elif not git_ref and not (checksum and attributes.get("url")):
            failed.append("version %r has no fetch source (a `url` and sha256, or `git` and a "
                          "branch, tag or commit)" % first_string(v))
    for c in calls:
        if name(c) != "depends_on":
            continue
        dep = re.split(r"[@+~%^ ]", first_string(c) or "")[0]
        if dep not in KNOWN and dep not in ours:
            failed.append("depends_on(%r): not a package this check knows to be the project "
                          "meant (Spack's builtin `ck` is a Java tool, not Concurrency Kit); "
                          "add a package to packaging/spack or to KNOWN after reading Spack's "
                          "recipe" % dep)
    licenses = [first_string(c) for c in calls if name(c) == "license"]
    if licenses != ["BSD-3-Clause"] or \
            "Redistribution and use" not in open(os.path.join(src, "LICENSE")).read():
        failed.append("license %r is not the project's (LICENSE: BSD 3-Clause)" % licenses)
    options = cmake_options(src)
    variants = {first_string(c) for c in calls if name(c) == "variant"}
    reached = set()
    defined = {}
    for c in calls:
        if name(c) not in ("define", "define_from_variant"):
            continue
        option = first_string(c)
        if option not in options:
            failed.append("cmake_args passes %s, which the build does not have" % option)
        if name(c) == "define_from_variant" and len(c.args) > 1:
            variant = c.args[1].value
            reached.add(variant)
            if variant not in variants:
                failed.append("define_from_variant(%s, %r): no such variant" % (option, variant))
        if name(c) == "define" and len(c.args) > 1 and isinstance(c.args[1], ast.Constant):
            defined[option] = c.args[1].value
    for variant in sorted(variants - reached - {"mpi"}):
        failed.append("variant %r never reaches CMake (no define_from_variant)" % variant)
    for option in ("TOPSYNC_MPI_MATRIX_DIR", "TOPSYNC_MPI_ABI_INCLUDE_DIR"):
        if defined.get(option) != "":
            failed.append("cmake_args leaves %s to its default, a host path (the test "
                          "matrix's /var/cache)" % option)
    for node in ast.walk(cls):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                re.match(r"/(var|usr|opt|home|tmp)/", node.value):
            failed.append("a host path in the recipe: %r" % node.value)
    if not any(name(c) == "define" and first_string(c) == "TOPSYNC_MPI" for c in calls):
        failed.append("cmake_args does not name the spec's MPI (TOPSYNC_MPI): every MPI "
                      "CMake finds would be built for")
    return failed


def run_spack(src):
    """Spack itself on the recipes, when one is installed."""
    spack = os.environ.get("TOPSYNC_SPACK") or shutil.which("spack")
    if not spack:
        print("note: no Spack here (spack on PATH or TOPSYNC_SPACK): the recipes were checked "
              "without it")
        return []
    failed = []
    with tempfile.TemporaryDirectory() as scope:
        with open(os.path.join(scope, "repos.yaml"), "w") as f:
            f.write("repos:\n- %s\n" % os.path.join(os.path.abspath(src), "packaging/spack"))
        for args in (["audit", "packages", "topsync", "concurrencykit"], ["info", "topsync"]):
            r = subprocess.run([spack, "-C", scope] + args, capture_output=True, text=True)
            out = r.stdout + r.stderr
            if r.returncode != 0 or re.search(r"[1-9][0-9]* issues? found", out):
                failed.append("spack %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                        out.strip()[-400:]))
            else:
                print("PASS: spack %s" % " ".join(args))
    return failed


def self_test(src):
    """Each defect of issue 55 put back into a copy must fail the check."""
    defects = {
        "no repo.yaml": lambda d: os.unlink(os.path.join(d, "packaging/spack/repo.yaml")),
        "no fetch source": lambda d: edit(d, r'\n    git = "[^"]*"', ""),
        "a dependency on another project's package": lambda d: edit(
            d, r'depends_on\("concurrencykit"', 'depends_on("ck"'),
        "a variant that never reaches CMake": lambda d: edit(
            d, r'\n\s*self\.define_from_variant\("TOPSYNC_WITH_CK", "ck"\),', ""),
        "a host path left to its default": lambda d: edit(
            d, r'\n\s*self\.define\("TOPSYNC_MPI_MATRIX_DIR", ""\),', ""),
    }
    failed = []
    for what, put_back in defects.items():
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(os.path.join(src, "packaging"), os.path.join(d, "packaging"))
            shutil.copy(os.path.join(src, "LICENSE"), d)
            for root, _, files in os.walk(src):
                if "/build" in root or "/.git" in root or "CMakeLists.txt" not in files:
                    continue
                target = os.path.join(d, os.path.relpath(root, src))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(root, "CMakeLists.txt"), target)
            if check(d):
                failed.append("the copy passes as it is: %s" % check(d))
                continue
            put_back(d)
            found = check(d)
            if found:
                print("PASS: %s is caught: %s" % (what, found[0]))
            else:
                failed.append("%s is not caught" % what)
    return failed


def edit(d, pattern, replacement):
    path = os.path.join(d, "packaging/spack/packages/topsync/package.py")
    text = open(path).read()
    new = re.sub(pattern, replacement, text, count=1)
    if new == text:
        raise SystemExit("self-test: %r not found in the recipe" % pattern)
    open(path, "w").write(new)


def main(argv):
    selftest = "--self-test" in argv
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    src = args[0]
    failed = self_test(src) if selftest else check(src) + run_spack(src)
    for f in failed:
        print("FAILED: " + f)
    print("%s: %d failed" % ("self-test" if selftest else "recipes", len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
