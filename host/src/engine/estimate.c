/*
 * Admission (issue 13): the bytes a network will need, per VP and rank, on
 * the host and on the device, from its description alone (populations,
 * connection rules, synapse models, recording, the split), before anything
 * is built; and the refusal of a network that cannot fit, with what would
 * make it fit. The formulas are the build's own (build.c, plastic.c), with
 * each block's synapse count the rule's expectation (exact for the fixed
 * in-degree, all-to-all and one-to-one rules; for fixed_total_number,
 * fixed_outdegree and pairwise_bernoulli the expectation of the block's share).
 */
#define _GNU_SOURCE /* sched_getaffinity: the cores the build may use */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"

/* The device memory limit a user may set (NESTCL_DEVICE_MEMORY_LIMIT, with K, M or G); none: SIZE_MAX. */
size_t eng_memory_limit_env(void)
{
  const char *s = getenv("NESTCL_DEVICE_MEMORY_LIMIT");
  if (!s || !*s) {
    return (size_t)-1;
  }
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k')
    v *= 1024.0;
  else if (*end == 'M' || *end == 'm')
    v *= 1024.0 * 1024.0;
  else if (*end == 'G' || *end == 'g')
    v *= 1024.0 * 1024.0 * 1024.0;
  return v > 0 ? (size_t)v : (size_t)-1;
}

int eng_build_thread_count(const nestcl_engine *e)
{
  if (e->desc.cfg.build_threads > 0) {
    return e->desc.cfg.build_threads;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return CPU_COUNT(&set);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* Expected synapses of projection pr onto n of the target population's neurons. */
static double expected_synapses(const nestcl_engine *e, const eng_projection *pr, uint32_t n)
{
  const eng_population *sp = &e->desc.pops[pr->src], *tp = &e->desc.pops[pr->tgt];
  double ns = (double)sp->n, nT = (double)tp->n, nt = (double)n;
  int self = pr->src == pr->tgt && !pr->conn.allow_autapses;
  switch (pr->conn.rule) {
  case NESTCL_RULE_ALL_TO_ALL:
    return (ns - (self ? 1.0 : 0.0)) * nt;
  case NESTCL_RULE_ONE_TO_ONE:
    return nt;
  case NESTCL_RULE_FIXED_INDEGREE:
    return (double)pr->conn.degree * nt;
  case NESTCL_RULE_FIXED_OUTDEGREE:
    return nT > 0 ? (double)pr->conn.degree * ns * nt / nT : 0.0;
  case NESTCL_RULE_FIXED_TOTAL_NUMBER:
    return nT > 0 ? (double)pr->conn.N * nt / nT : 0.0;
  case NESTCL_RULE_PAIRWISE_BERNOULLI:
    return pr->conn.p * (ns - (self ? 1.0 : 0.0)) * nt;
  }
  return 0.0;
}

double eng_expected_synapses(const nestcl_engine *e)
{
  double s = 0.0;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int q = 0; q < e->desc.n_projs; ++q) {
      s += expected_synapses(e, &e->desc.projs[q], e->vps[v].blocks[e->desc.projs[q].tgt].n);
    }
  }
  return s;
}

/* Whether projection pr's delays are one value, and which (steps). */
static int constant_delay(const nestcl_engine *e, const eng_projection *pr, int64_t *steps)
{
  double lo, hi;
  eng_value_range(&pr->syn.delay_ms, &lo, &hi);
  int64_t a = eng_delay_ms_to_steps(lo, e->desc.cfg.resolution_ms),
          b = eng_delay_ms_to_steps(hi, e->desc.cfg.resolution_ms);
  *steps = a;
  return pr->syn.delay_ms.kind == NESTCL_DIST_CONSTANT || a == b;
}

typedef struct block_est {
  size_t cls[NESTCL_MEM_CLASSES];
  double synapses, plastic;
  size_t plastic_bytes; /* resident plastic synapses (what batching can leave off the device) */
} block_est;

/* One block: n neurons of population pop on a VP (device: counted as upload_block and plastic.c allocate). */
static void block_bytes(const nestcl_engine *e, int pop, uint32_t n, int device, int min_delay, int ring_slots,
                        block_est *o)
{
  memset(o, 0, sizeof *o);
  const eng_population *p = &e->desc.pops[pop];
  const nestcl_model *m = p->model;
  size_t wsize = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? 8 : 4;
  for (int f = 0; f < m->n_fields; ++f) {
    o->cls[NESTCL_MEM_STATE] += nestcl_field_type_size(m->fields[f].type) * nestcl_field_len(&m->fields[f], p->K) * n;
  }
  o->cls[NESTCL_MEM_RING] += (size_t)ring_slots * p->n_channels * n * 8;
  size_t spike_cap = (size_t)n * (size_t)min_delay;
  o->cls[NESTCL_MEM_OTHER] += spike_cap * 8 + (device ? sizeof(uint32_t) * NESTCL_COUNT_WORDS : 0);
  if (p->rec_interval_steps) {
    o->cls[NESTCL_MEM_RECORDING] += (size_t)min_delay * eng_rec_width(m, p->K) * n * 8;
  }
  /* Static synapses: one CSR over all sources, per-synapse delays unless they are one value. */
  double nnz = 0.0;
  int hom = 1, have = 0, history = 0;
  int64_t d0 = 0;
  for (int q = 0; q < e->desc.n_projs; ++q) {
    const eng_projection *pr = &e->desc.projs[q];
    if (pr->tgt != pop)
      continue;
    double s = expected_synapses(e, pr, n);
    int64_t d;
    int c = constant_delay(e, pr, &d);
    if (pr->sm) {
      const eng_syn_layout *L = &pr->lay;
      uint32_t rows = e->desc.pops[pr->src].n;
      size_t b = ((size_t)rows + 1) * 8 + (size_t)llround(s) * (4 + L->state_bytes) + (c ? 0 : (size_t)llround(s) * 2) +
        (size_t)rows * L->src_bytes;
      o->cls[NESTCL_MEM_SYNAPSES] += b;
      o->plastic_bytes += b;
      o->plastic += s;
      history |= pr->sm->uses_history;
      if (device) {
        /* the template, the common properties and the per-row counters (eng_plastic_row_done_alloc) */
        o->cls[NESTCL_MEM_OTHER] += pr->sm->syn_size + (pr->sm->cp_size ? pr->sm->cp_size : 8) + ((size_t)rows + 1) * 4;
      }
      continue;
    }
    nnz += s;
    if (!c) {
      hom = 0;
    } else if (have && d != d0) {
      hom = 0;
    }
    have = 1;
    d0 = d;
  }
  size_t nz = (size_t)llround(nnz);
  o->cls[NESTCL_MEM_SYNAPSES] += (e->desc.n_global + 1) * 8 + nz * (4 + wsize) + (hom ? 0 : nz * 2);
  o->synapses = nnz + o->plastic;
  if (history) {
    size_t cap =
      e->desc.cfg.history_capacity < e->desc.cfg.history_max ? e->desc.cfg.history_capacity : e->desc.cfg.history_max;
    o->cls[NESTCL_MEM_STATE] += (size_t)n * (cap * 28 + 44) + (device ? spike_cap * 8 + 8 : 0);
  }
}

static size_t meminfo_available(void)
{
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) {
    return 0;
  }
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
      break;
    }
  }
  fclose(f);
  return (size_t)kb * 1024;
}

/* Ranks of this job on this machine (Open MPI and MPICH say so), to share its memory. */
static int local_ranks(const nestcl_engine *e)
{
  const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!v)
    v = getenv("MPI_LOCALNRANKS");
  int n = v ? atoi(v) : 0;
  return e->desc.cfg.use_mpi && n > 1 ? n : 1;
}

/* The shape the estimate counts: this rank's VPs and the super step's length in steps. */
typedef struct est_shape {
  int rank, ranks, n_vps, any_plastic, min_delay, ring_slots;
} est_shape;

/* Every VP's blocks and spike lists into out; returns the bytes the build holds on the host. */
static size_t estimate_vps(const nestcl_engine *e, const est_shape *sh, nestcl_memory_estimate *out)
{
  size_t host_all = 0; /* every block's host arrays during the build (the streams' are freed after upload) */
  size_t global_cap = e->desc.n_global * (size_t)sh->min_delay;
  for (int v = 0; v < sh->n_vps; ++v) {
    int gpu = v >= e->desc.cfg.cpu_threads;
    uint32_t vp_neurons = 0;
    nestcl_vp_estimate *ve = v < NESTCL_ESTIMATE_MAX_VPS ? &out->vps[v] : NULL;
    for (int p = 0; p < e->desc.n_pops; ++p) {
      uint32_t first, n;
      eng_block_range(e, &e->desc.pops[p], v, sh->rank, sh->ranks, &first, &n);
      vp_neurons += n;
      block_est d, h;
      block_bytes(e, p, n, gpu, sh->min_delay, sh->ring_slots, &d);
      block_bytes(e, p, n, 0, sh->min_delay, sh->ring_slots, &h);
      out->synapses += d.synapses;
      out->plastic_synapses += d.plastic;
      for (int c = 0; c < NESTCL_MEM_CLASSES; ++c) {
        if (gpu) {
          out->device_bytes[c] += d.cls[c];
        } else {
          out->host_bytes[c] += h.cls[c];
        }
        if (ve)
          (gpu ? ve->device_bytes : ve->host_bytes)[c] += gpu ? d.cls[c] : h.cls[c];
        host_all += h.cls[c];
      }
      if (gpu)
        out->device_plastic_bytes += d.plastic_bytes;
    }
    if (ve) {
      ve->is_gpu = gpu;
      ve->neurons = vp_neurons;
    }
    if (gpu) {
      size_t g = global_cap * 8 + (sh->any_plastic ? global_cap * 16 : 0);
      out->device_bytes[NESTCL_MEM_OTHER] += g;
      if (ve)
        ve->device_bytes[NESTCL_MEM_OTHER] += g;
    }
    host_all += (size_t)vp_neurons * (size_t)sh->min_delay * 8; /* the VP's spike list */
  }
  /* The rank's lists: out-degrees, the global spike list and its gather copy, the plastic sources. */
  host_all += e->desc.n_global * 4 + 2 * global_cap * 8 + (sh->any_plastic ? global_cap * 20 : 0);
  /*
   * While a block is drawn (connect.c): each chunk's counts (4 bytes) per
   * source row of every static projection onto it (or of one plastic set),
   * CN_CHUNKS_PER_THREAD (4) chunks per build thread; the largest block's.
   */
  size_t rows = 0;
  for (int p = 0; p < e->desc.n_pops; ++p) {
    size_t st = 0, pl = 0;
    for (int q = 0; q < e->desc.n_projs; ++q) {
      const eng_projection *pr = &e->desc.projs[q];
      size_t n = pr->tgt == p ? e->desc.pops[pr->src].n : 0;
      st += pr->sm ? 0 : n;
      pl = pr->sm && n > pl ? n : pl;
    }
    rows = st > rows ? st : rows;
    rows = pl > rows ? pl : rows;
  }
  host_all += (size_t)4 * (size_t)eng_build_thread_count(e) * rows * 4;
  return host_all;
}

/* The device's memory (the engine's, or one opened for the question) and the resident stream's buffers on it. */
static int estimate_device(nestcl_engine *e, const est_shape *sh, nestcl_memory_estimate *out)
{
  nestcl_device *dev = e->device.dev;
  int opened = 0;
  if (!dev) {
    int rc = nestcl_device_open(e->desc.cfg.device, 1, &dev);
    if (rc) {
      return rc;
    }
    opened = 1;
  }
  const nestcl_device_info *info = nestcl_device_get_info(dev);
  size_t avail = (size_t)info->global_mem_bytes;
  size_t lim = eng_memory_limit_env();
  if (lim < avail)
    avail = lim;
  if (e->desc.cfg.device_memory > 0 && e->desc.cfg.device_memory < avail)
    avail = e->desc.cfg.device_memory;
  out->device_available = avail;
  snprintf(out->device_name, sizeof out->device_name, "%s", info->device_name);
  int mode = eng_resident_mode(e, sh->ranks);
  size_t dev_total = 0;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c) {
    dev_total += out->device_bytes[c];
  }
  if (mode && sh->any_plastic && dev_total > avail) {
    mode = 0; /* the plastic synapses go batched (build.c, check_device_budget), which keeps the host clock */
  }
  if (mode) {
    /* The resident stream's buffers (resident.c), on its one stream VP (after the threads). */
    eng_res_plan plan;
    eng_resident_plan(e, mode, sh->min_delay, (size_t)info->max_alloc_bytes, &plan);
    out->device_bytes[NESTCL_MEM_OTHER] += plan.other_bytes;
    out->device_bytes[NESTCL_MEM_RECORDING] += plan.rec_bytes + plan.mm_bytes;
    if (e->desc.cfg.cpu_threads < NESTCL_ESTIMATE_MAX_VPS) {
      out->vps[e->desc.cfg.cpu_threads].device_bytes[NESTCL_MEM_OTHER] += plan.other_bytes;
      out->vps[e->desc.cfg.cpu_threads].device_bytes[NESTCL_MEM_RECORDING] += plan.rec_bytes + plan.mm_bytes;
    }
  }
  if (opened) {
    nestcl_device_close(dev);
  }
  return 0;
}

int eng_estimate(nestcl_engine *e, nestcl_memory_estimate *out)
{
  memset(out, 0, sizeof *out);
  est_shape sh;
  eng_world(e, &sh.rank, &sh.ranks);
  if (e->desc.n_pops == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "no neurons to simulate");
  }
  sh.n_vps = e->desc.cfg.cpu_threads + e->desc.cfg.gpu_streams;
  sh.any_plastic = 0;
  for (int q = 0; q < e->desc.n_projs; ++q) {
    sh.any_plastic |= e->desc.projs[q].sm != NULL;
  }
  int64_t lo, hi;
  eng_delay_steps(e, &lo, &hi);
  sh.min_delay = (int)lo;
  sh.ring_slots = (int)(lo + hi);
  out->rank = sh.rank;
  out->n_ranks = sh.ranks;
  out->n_vps = sh.n_vps;
  out->neurons = e->desc.n_global;
  out->host_build_bytes = estimate_vps(e, &sh, out);
  /* What there is. */
  int lr = local_ranks(e);
  out->host_available = meminfo_available() / (size_t)lr;
  out->device_available = 0;
  if (e->desc.cfg.gpu_streams > 0) {
    return estimate_device(e, &sh, out);
  }
  return 0;
}

/* Bytes for a message: "3.21 GiB", "12.5 MiB", "800 KiB", "512 bytes". */
static const char *human(char *buf, size_t cap, size_t b)
{
  double x = (double)b;
  if (x >= 1073741824.0)
    snprintf(buf, cap, "%.3g GiB", x / 1073741824.0);
  else if (x >= 1048576.0)
    snprintf(buf, cap, "%.3g MiB", x / 1048576.0);
  else if (x >= 1024.0)
    snprintf(buf, cap, "%.3g KiB", x / 1024.0);
  else
    snprintf(buf, cap, "%zu bytes", b);
  return buf;
}

int eng_estimate_resident(nestcl_engine *e)
{
  nestcl_memory_estimate est;
  if (e->desc.cfg.gpu_streams <= 0 || eng_estimate(e, &est) != 0) {
    return 0;
  }
  size_t dev = 0;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c)
    dev += est.device_bytes[c];
  return dev <= est.device_available;
}

static int admit_local(nestcl_engine *e);

/* Collective under MPI: every rank refuses when one does, with that rank's message (none is left waiting in
   the build's collectives). */
int eng_admit(nestcl_engine *e)
{
  if (getenv("NESTCL_NO_ADMISSION")) {
    return 0;
  }
  return eng_agree(e, admit_local(e));
}

static int admit_local(nestcl_engine *e)
{
  nestcl_memory_estimate est;
  int rc = eng_estimate(e, &est);
  if (rc) {
    return rc;
  }
  size_t dev = 0, host = est.host_build_bytes;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c)
    dev += est.device_bytes[c];
  size_t wsave =
    e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? (size_t)(est.synapses - est.plastic_synapses) * 4 : 0;
  char opts[128], need[32], have[32];
  opts[0] = 0;
  if (est.host_available > 0 && host > est.host_available) {
    if (wsave) {
      snprintf(opts, sizeof opts, "--weight-type float (saves %s), ", human(need, sizeof need, wsave));
    }
    return nestcl_set_error(NESTCL_ENOMEM,
                            "admission: the network needs %s of host memory on rank %d (%llu neurons, %.3g "
                            "synapses on this rank) but %s are available; it would fit with %.0f or more MPI "
                            "ranks on as many machines, %smore of it on a device (--streams, --gpu-fraction), or a "
                            "smaller network",
                            human(need, sizeof need, host), est.rank, (unsigned long long)est.neurons, est.synapses,
                            human(have, sizeof have, est.host_available),
                            ceil((double)host / (double)est.host_available * (double)est.n_ranks), opts);
  }
  if (e->desc.cfg.gpu_streams > 0 && dev > est.device_available) {
    size_t resident = dev - est.device_plastic_bytes;
    if (est.device_plastic_bytes > 0 && resident < est.device_available) {
      return 0; /* the plastic synapses go batched (check_device_budget sizes the batches) */
    }
    if (wsave) {
      snprintf(opts, sizeof opts, "--weight-type float (saves up to %s), ", human(need, sizeof need, wsave));
    }
    char room[32];
    return nestcl_set_error(NESTCL_ENOMEM,
                            "admission: the network needs %s on device '%s' (rank %d%s) but %s are "
                            "available; it would fit with a smaller --gpu-fraction (about %.2f), %s%.0f or more MPI "
                            "ranks with a device each, or a larger device memory budget",
                            human(room, sizeof room, est.device_plastic_bytes ? resident : dev), est.device_name,
                            est.rank,
                            est.device_plastic_bytes ? ", without its plastic synapses, which could go batched" : "",
                            human(have, sizeof have, est.device_available),
                            e->desc.cfg.gpu_fraction * (double)est.device_available / (double)dev, opts,
                            ceil((double)dev / (double)est.device_available * (double)est.n_ranks));
  }
  return 0;
}
