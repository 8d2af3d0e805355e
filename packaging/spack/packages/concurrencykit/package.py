# Concurrency Kit (https://github.com/concurrencykit/ck), for topsync's
# benchmark peers (topsync +ck). Spack's builtin repository has none: its
# `ck` is a Java code-metrics tool. Fetched by tag and commit from git, so
# that the source is pinned without a release tarball's checksum.

import spack
from spack.package import *

# Spack 0.23.0 and later, released (not a 0.23.0.devN snapshot)
spack_has_language_virtuals = spack.spack_version_info[:3] >= (0, 23, 0) and not any(
    isinstance(part, str) for part in spack.spack_version_info
)


class Concurrencykit(AutotoolsPackage):
    """Concurrency primitives, safe memory reclamation mechanisms and
    non-blocking data structures for C (barriers among them)."""

    homepage = "https://github.com/concurrencykit/ck"
    git = "https://github.com/concurrencykit/ck.git"

    license("BSD-2-Clause")

    version("0.7.2", tag="0.7.2", commit="981e14290df3d4339974eade5d8820dafd506b58")
    version("0.7.1", tag="0.7.1", commit="351415ccaa78798332e556f661fc7e832447f3da")

    if spack_has_language_virtuals:  # see topsync's recipe
        depends_on("c", type="build")
    depends_on("gmake", type="build")

    def configure_args(self):
        # CK's configure is its own script, not autoconf's: it knows --prefix
        return []

    def autoreconf(self, spec, prefix):
        pass  # a configure script ships with the source
