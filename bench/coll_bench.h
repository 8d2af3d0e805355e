/* topsync-bench allreduce|reduce|bcast (coll_bench.c): argv[0] is the op. */
#ifndef TOPSYNC_BENCH_COLL_H
#define TOPSYNC_BENCH_COLL_H
int bench_coll_main(int argc, char **argv);
#endif
