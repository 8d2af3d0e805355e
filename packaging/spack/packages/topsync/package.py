# Spack package for topsync (https://spack.io):
#   spack repo add packaging/spack        # this directory holds repo.yaml
#   spack install topsync ^openmpi         # or ^mpich, ^intel-oneapi-mpi, ...
#   spack load topsync
# Offline (an air-gapped cluster): a mirror holding the source, or
# `spack dev-build topsync@main` in a checkout (docs/install.md).
# tests/unit/spack_test.py checks this recipe in CI, and runs Spack on it
# when one is installed.

import spack
from spack.package import *

# Spack 0.23.0 and later, released (not a 0.23.0.devN snapshot)
spack_has_language_virtuals = spack.spack_version_info[:3] >= (0, 23, 0) and not any(
    isinstance(part, str) for part in spack.spack_version_info
)


class Topsync(CMakePackage):
    """Topology-aware synchronization for many-core NUMA servers: a
    hierarchical barrier grouping participants by shared caches, NUMA nodes
    and packages (hwloc), drop-in MPI_Barrier (PMPI) and pthread_barrier
    libraries, and Remote Core Locking with NUMA placement."""

    # where the project is to be published: nothing is there yet (README,
    # "HPC centres": give Spack the source with package_attributes)
    homepage = "https://github.com/topsync/topsync"
    git = "https://github.com/topsync/topsync.git"
    url = "https://github.com/topsync/topsync/archive/refs/tags/v0.1.0.tar.gz"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("mpi", default=True, description="Build libtopsync-mpi for the MPI in the spec")
    variant("pthread", default=True, description="Build libtopsync-pthread (pthread_barrier_* drop-in)")
    variant("tools", default=True, description="Build topsync-info, -bench, -sim, -tune and man pages")
    variant("ck", default=False, description="Concurrency Kit barriers as benchmark peers")

    # the C11 compiler: a dependency like any other from Spack 0.23 on (the
    # language virtuals); before, and in 0.23's development snapshots, the
    # compiler comes with every package and `c` cannot be satisfied
    if spack_has_language_virtuals:
        depends_on("c", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("hwloc@2:")
    depends_on("mpi", when="+mpi")
    depends_on("concurrencykit", when="+ck+tools")
    depends_on("python@3:", type="build", when="+tools")

    conflicts("+ck", when="~tools", msg="Concurrency Kit is only used by the benchmarks (+tools)")

    # the MPIs of the MPICH ABI, and the pkg-config name each one installs
    mpich_abi = {"mpich": "mpich", "intel-oneapi-mpi": "impi", "mvapich2": "mvapich2",
                 "mvapich": "mvapich", "cray-mpich": "mpich"}

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("TOPSYNC_BUILD_PTHREAD", "pthread"),
            self.define_from_variant("TOPSYNC_BUILD_TOOLS", "tools"),
            self.define_from_variant("TOPSYNC_WITH_CK", "ck"),
            self.define("TOPSYNC_BUILD_TESTS", self.run_tests),
            # nothing from the host's test matrix (/var/cache): the MPI-5 ABI
            # library is built only from a header given here
            self.define("TOPSYNC_MPI_MATRIX_DIR", ""),
            self.define("TOPSYNC_MPI_ABI_INCLUDE_DIR", ""),
        ]
        if spec.satisfies("+mpi"):
            mpi = spec["mpi"].name
            if mpi == "openmpi":
                args += [self.define("TOPSYNC_BUILD_MPI", True), self.define("TOPSYNC_MPI", "openmpi")]
            elif mpi in self.mpich_abi:
                args += [
                    self.define("TOPSYNC_BUILD_MPI", True),
                    self.define("TOPSYNC_MPI", "mpich"),
                    self.define("TOPSYNC_MPICH_PKGCONFIG", self.mpich_abi[mpi]),
                ]
            else:
                raise InstallError(
                    "topsync +mpi serves Open MPI and the MPICH ABI ({0}), not {1}: "
                    "build ~mpi".format(", ".join(sorted(self.mpich_abi)), mpi)
                )
        else:
            args.append(self.define("TOPSYNC_BUILD_MPI", False))
        return args

    def setup_run_environment(self, env):
        # the drop-ins are used by LD_PRELOAD, which needs no ldconfig here
        env.prepend_path("MANPATH", self.prefix.share.man)

    def test_info(self):
        """topsync-info describes the machine it runs on"""
        if self.spec.satisfies("~tools"):
            raise SkipTest("built without the tools")
        info = which(self.prefix.bin.join("topsync-info"))
        out = info("--np", "2", output=str, error=str)
        assert "Active levels" in out, out

    def test_pthread_dropin(self):
        """libtopsync-pthread binds a pthread program's barriers"""
        if self.spec.satisfies("~pthread~tools"):
            raise SkipTest("built without the drop-in or its test program")
        loop = which(self.prefix.libexec.topsync.join("topsync-bench-pthread-loop"))
        lib = find_libraries("libtopsync-pthread", self.prefix, shared=True, recursive=True)
        assert lib, "no libtopsync-pthread under " + self.prefix
        out = loop("2", "100", "1", output=str, error=str, extra_env={"LD_PRELOAD": lib[0]})
        assert "implementation: topsync:" in out, out
