#!/usr/bin/env python3
"""The Spack package (packaging/spack/packages/topsync/package.py), checked
without Spack (it cannot fetch offline here): it parses as Python, defines
class Topsync(CMakePackage) with a version, its license is the project's,
every CMake option it passes (define / define_from_variant) is an option
of the build, and every variant it reads in cmake_args is declared.

usage: spack_test.py SOURCE_DIR
"""
import ast
import os
import re
import sys


def main(src):
    failed = []
    path = os.path.join(src, "packaging/spack/packages/topsync/package.py")
    tree = ast.parse(open(path).read(), path)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Topsync"]
    if not classes or not any(getattr(b, "id", "") == "CMakePackage" for b in classes[0].bases):
        failed.append("no class Topsync(CMakePackage)")
        cls = None
    else:
        cls = classes[0]
    calls = [n for n in ast.walk(cls or tree) if isinstance(n, ast.Call) and hasattr(n.func, "id")
             or isinstance(n, ast.Call) and hasattr(n.func, "attr")]

    def name(call):
        return getattr(call.func, "id", None) or getattr(call.func, "attr", None)

    def first_string(call):
        return call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None

    variants = {first_string(c) for c in calls if name(c) == "variant"}
    if not any(name(c) == "version" for c in calls):
        failed.append("no version()")
    licenses = [first_string(c) for c in calls if name(c) == "license"]
    project_license = open(os.path.join(src, "LICENSE")).read()
    if licenses != ["BSD-3-Clause"] or "Redistribution and use" not in project_license:
        failed.append("license %r is not the project's (LICENSE: BSD 3-Clause)" % licenses)
    options = set()
    for root, _, files in os.walk(src):
        if "/build" in root or "/.git" in root:
            continue
        for f in files:
            if f == "CMakeLists.txt":
                text = open(os.path.join(root, f)).read()
                options |= set(re.findall(r"option\((TOPSYNC_[A-Z0-9_]+)", text))
                options |= set(re.findall(r"set\((TOPSYNC_[A-Z0-9_]+) [^)]*CACHE", text))
    passed = 0
    for c in calls:
        if name(c) in ("define", "define_from_variant"):
            option = first_string(c)
            if option not in options:
                failed.append("cmake_args passes %s, which the build does not have" % option)
            else:
                passed += 1
            if name(c) == "define_from_variant" and len(c.args) > 1:
                variant = c.args[1].value
                if variant not in variants:
                    failed.append("define_from_variant(%s, %r): no such variant" % (option, variant))
    if passed < 3:
        failed.append("only %d CMake options found in cmake_args" % passed)
    for f in failed:
        print("FAILED: " + f)
    structure = 4  # the class, a version, the license, at least 3 options
    print("%d passed, %d failed" % (passed + structure - min(structure, len(failed)),
                                     len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
