/*
 * Every MPI call of the engine (NEST keeps them in its MPIManager): the
 * world's size, the collectives of the build, the exchange and the
 * statistics, and the agreement on a failure. Built without MPI
 * (NESTCL_WITH_MPI off), the same functions serve one rank: reductions and
 * broadcasts leave their buffers alone, gathers copy this rank's part. Each
 * collective is a no-op when the engine runs on one rank, so callers need no
 * test of their own; every rank's master calls them in the same order.
 */
#include <stdio.h>
#include <string.h>

#ifdef NESTCL_WITH_MPI
#include <mpi.h>
#endif

#include "engine_internal.h"

static size_t type_size(eng_mpi_type t)
{
  switch (t) {
  case ENG_MPI_INT:
    return sizeof(int);
  case ENG_MPI_U32:
    return sizeof(uint32_t);
  case ENG_MPI_U64:
    return sizeof(uint64_t);
  case ENG_MPI_DOUBLE:
    return sizeof(double);
  }
  return 1;
}

#ifdef NESTCL_WITH_MPI
static MPI_Datatype mpi_type(eng_mpi_type t)
{
  switch (t) {
  case ENG_MPI_INT:
    return MPI_INT;
  case ENG_MPI_U32:
    return MPI_UINT32_T;
  case ENG_MPI_U64:
    return MPI_UINT64_T;
  case ENG_MPI_DOUBLE:
    return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

static MPI_Op mpi_op(eng_mpi_op op)
{
  switch (op) {
  case ENG_MPI_SUM:
    return MPI_SUM;
  case ENG_MPI_MIN:
    return MPI_MIN;
  case ENG_MPI_MAX:
    return MPI_MAX;
  }
  return MPI_SUM;
}
#endif

int eng_mpi_built(void)
{
#ifdef NESTCL_WITH_MPI
  return 1;
#else
  return 0;
#endif
}

int eng_mpi_initialised(void)
{
  int init = 0;
#ifdef NESTCL_WITH_MPI
  MPI_Initialized(&init);
#endif
  return init;
}

void eng_world(const nestcl_engine *e, int *rank, int *ranks)
{
  *rank = 0;
  *ranks = 1;
#ifdef NESTCL_WITH_MPI
  if (e->desc.cfg.use_mpi && eng_mpi_initialised()) {
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
  }
#else
  (void)e;
#endif
}

void eng_mpi_allreduce(const nestcl_engine *e, void *buf, int count, eng_mpi_type t, eng_mpi_op op)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    MPI_Allreduce(MPI_IN_PLACE, buf, count, mpi_type(t), mpi_op(op), MPI_COMM_WORLD);
  }
#else
  (void)e;
  (void)buf;
  (void)count;
  (void)t;
  (void)op;
#endif
}

void eng_mpi_bcast(const nestcl_engine *e, void *buf, int bytes, int root)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
  }
#else
  (void)e;
  (void)buf;
  (void)bytes;
  (void)root;
#endif
}

void eng_mpi_allgather(const nestcl_engine *e, const void *mine, void *all, int count, eng_mpi_type t)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    MPI_Allgather(mine, count, mpi_type(t), all, count, mpi_type(t), MPI_COMM_WORLD);
    return;
  }
#else
  (void)e;
#endif
  memcpy(all, mine, (size_t)count * type_size(t));
}

int eng_mpi_allgatherv_u32(const nestcl_engine *e, const uint32_t *mine, int n, uint32_t *all, const int *counts,
                           const int *displs)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    int rc = MPI_Allgatherv(mine, n, MPI_UINT32_T, all, counts, displs, MPI_UINT32_T, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      return nestcl_set_error(NESTCL_ERUNTIME, "MPI_Allgatherv failed (%d)", rc);
    }
    return 0;
  }
#else
  (void)e;
#endif
  memmove(all + displs[0], mine, (size_t)n * sizeof *mine);
  (void)counts;
  return 0;
}

void eng_mpi_barrier(const nestcl_engine *e)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    MPI_Barrier(MPI_COMM_WORLD);
  }
#else
  (void)e;
#endif
}

/* Under MPI: every rank learns whether any failed; the failed ranks keep their message, the others get the first's. */
int eng_agree(const nestcl_engine *e, int rc)
{
#ifdef NESTCL_WITH_MPI
  if (e->exchange.n_ranks > 1) {
    int first = rc ? e->exchange.rank : e->exchange.n_ranks;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first >= e->exchange.n_ranks) {
      return 0;
    }
    struct {
      int code;
      char msg[1020];
    } f;
    memset(&f, 0, sizeof f);
    if (e->exchange.rank == first) {
      f.code = rc;
      snprintf(f.msg, sizeof f.msg, "%s", nestcl_last_error());
    }
    MPI_Bcast(&f, (int)sizeof f, MPI_BYTE, first, MPI_COMM_WORLD);
    if (!rc) {
      return nestcl_set_error(f.code, "rank %d: %s", first, f.msg);
    }
    return rc;
  }
#else
  (void)e;
#endif
  return rc;
}
