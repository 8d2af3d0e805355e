# Spack package for topsync (https://spack.io). topsync has no public
# download address yet, so Spack builds it from a checkout:
#   spack repo add packaging/spack
#   cd topsync && spack dev-build topsync@main +mpi ^openmpi   # or ^mpich
# (once published, set `git` below and `spack install topsync` fetches).
# tests/unit/spack_test.py checks it (it parses; every CMake option it
# passes exists), since Spack itself cannot run offline here.

from spack.package import *


class Topsync(CMakePackage):
    """Topology-aware synchronization for many-core NUMA servers: a
    hierarchical barrier grouping participants by shared caches, NUMA nodes
    and packages (hwloc), drop-in MPI_Barrier (PMPI) and pthread_barrier
    libraries, and Remote Core Locking with NUMA placement."""

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("mpi", default=True, description="Build libtopsync-mpi for the MPI in the spec")
    variant("pthread", default=True, description="Build libtopsync-pthread (pthread_barrier_* drop-in)")
    variant("tools", default=True, description="Build topsync-info, -bench, -sim, -tune and man pages")
    variant("ck", default=True, description="Concurrency Kit barriers as benchmark peers")

    depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("hwloc@2:")
    depends_on("mpi", when="+mpi")
    depends_on("ck", when="+ck+tools")
    depends_on("python@3:", type="build", when="+tools")

    def cmake_args(self):
        return [
            self.define_from_variant("TOPSYNC_BUILD_MPI", "mpi"),
            self.define_from_variant("TOPSYNC_BUILD_PTHREAD", "pthread"),
            self.define_from_variant("TOPSYNC_BUILD_TOOLS", "tools"),
            self.define("TOPSYNC_BUILD_TESTS", self.run_tests),
        ]

    def setup_run_environment(self, env):
        # the drop-ins are used by LD_PRELOAD, which needs no ldconfig here
        env.prepend_path("MANPATH", self.prefix.share.man)
