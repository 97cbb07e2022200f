/*
 * Determinism across processes: 2 MPI ranks x (1 thread + 1 stream) give the
 * spike train that 1 thread in one process gives (rank 0 runs that reference
 * itself, without MPI). Run through mpiexec -n 2.
 */
#include <mpi.h>
#include <stdio.h>

#include "brunel.h"

int main(int argc, char **argv)
{
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 4242;
  const double whole[] = {200.0};
  nestcl_engine_config c = cfg;
  c.cpu_threads = 1;
  c.gpu_streams = 1;
  c.gpu_fraction = 0.5;
  c.use_mpi = 1;
  brunel_result r;
  int rc = brunel_run(&c, 2000, 200, whole, 1, &r);
  int any = rc, skip = rc == NESTCL_ENODEV;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int status = 0;
  if (skip) {
    if (rank == 0) printf("SKIP: %s\n", nestcl_last_error());
    status = 77;
  } else if (any) {
    fprintf(stderr, "FAIL rank %d: %s\n", rank, rc ? nestcl_last_error() : "another rank failed");
    status = 1;
  } else {
    /* Every rank holds the whole train (the recorder reads the exchanged list); each compares. */
    brunel_result ref;
    if (brunel_run(&cfg, 2000, 200, whole, 1, &ref)) {
      fprintf(stderr, "FAIL reference: %s\n", nestcl_last_error());
      status = 1;
    } else {
      int bad = brunel_compare("2 ranks x (1 thread + 1 stream)", &ref, &r);
      printf("rank %d of %d: %zu spikes (reference %zu), %s\n", rank, size, r.n, ref.n,
             bad ? "DIFFERENT" : "identical");
      if (size != 2 || r.st.n_ranks != 2) {
        fprintf(stderr, "FAIL: expected 2 ranks\n");
        bad = 1;
      }
      status = bad;
      brunel_free(&ref);
    }
    brunel_free(&r);
  }
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
