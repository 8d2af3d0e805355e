"""MPI_Barrier from mpi4py, preloaded: a barrier loop with its property
checked every round through an MPI-3 shared-memory window (each rank writes
the round into its slot, barrier, every slot must hold that round, barrier);
then buffer Allreduce, Reduce and Bcast, each result checked (mpi4py calls
the MPI-4 large-count forms where the MPI has them: MPICH 5).
Prints the MPI's version, the MPI libraries mapped, and "N passed, M failed".
    mpi4py_check.py ROUNDS"""
import re
import sys

from mpi4py import MPI

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
comm = MPI.COMM_WORLD
node = comm.Split_type(MPI.COMM_TYPE_SHARED)
rank, size = node.rank, node.size
# each rank's slot: 8 bytes of its own in the node's shared window
win = MPI.Win.Allocate_shared(8, 8, comm=node)
views = []
for r in range(size):
    buf, _ = win.Shared_query(r)
    views.append(memoryview(buf).cast("B").cast("q"))
bad = 0
win.Lock_all()
for k in range(1, rounds + 1):
    views[rank][0] = k
    win.Sync()
    comm.Barrier()
    win.Sync()
    if any(v[0] != k for v in views):
        bad += 1
    comm.Barrier()
win.Unlock_all()
from array import array
for k in range(rounds // 10):
    out = array("i", [0, 0])
    comm.Allreduce([array("i", [comm.rank, k]), MPI.INT], [out, MPI.INT], op=MPI.SUM)
    want = comm.size * (comm.size - 1) // 2
    bad += out[0] != want or out[1] != k * comm.size
    root = k % comm.size
    out = array("i", [0])
    comm.Reduce([array("i", [comm.rank + 1]), MPI.INT], [out, MPI.INT], op=MPI.MAX, root=root)
    bad += comm.rank == root and out[0] != comm.size
    buf = array("i", [k if comm.rank == root else -1])
    comm.Bcast([buf, MPI.INT], root=root)
    bad += buf[0] != k
# the core library of an MPI, as maps_check.c counts them
with open("/proc/self/maps") as f:
    mapped = [line.split()[-1] for line in f if "/" in line]
maps = sorted({p for p in mapped if re.search(r"/lib(mpi|mpich|mpi_abi|mpi_ilp64)\.so(\.[0-9]+)*$", p)})
topsync = any("libtopsync-mpi" in p for p in mapped)
ok = int(bad == 0) + int(len(maps) == 1) + int(topsync)
failed = 3 - ok
total_ok = comm.allreduce(ok)
total_failed = comm.allreduce(failed)
if bad:
    print(f"rank {comm.rank}: {bad} rounds saw a slot behind or a wrong result", file=sys.stderr)
if len(maps) != 1:
    print(f"rank {comm.rank}: MPI libraries mapped: {maps}", file=sys.stderr)
if not topsync:
    print(f"rank {comm.rank}: libtopsync-mpi is not mapped", file=sys.stderr)
win.Free()
if comm.rank == 0:
    print(MPI.Get_library_version().splitlines()[0].strip(), "|", maps)
    print(f"{total_ok} passed, {total_failed} failed")
