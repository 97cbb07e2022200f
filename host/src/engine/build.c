/*
 * Instantiation of the described network (the first simulate()): the
 * partition of every population into weighted contiguous blocks over the VPs
 * (CPU VPs first, then the GPU streams, per MPI rank; partition.c), the
 * neurons' state (defaults, settings, pre_run), the synapses onto each block
 * into a CSR over global source ids (connect.c: every build thread draws, or
 * the device), and the upload of everything a GPU VP needs to stay resident
 * on the device (stream_upload.c, through the VP's table).
 *
 * Draws never depend on the partition: sources of target t in projection p
 * come from the Philox stream (seed, CONNECT; id t, step p<<34 | kind<<32 | j),
 * see engine.h. Memory: per block the CSR keeps row pointers over all global
 * sources (8 bytes x (N + 1), amortised over the block's synapses), a 32-bit
 * target word (channel << 24 | local index), a float or double weight, and a
 * 16-bit delay per synapse only when the block's delays differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include "engine_internal.h"
#include "connect_internal.h"
#include "engine_kernels_source.h"
#include "nestcl_fixed.h"
#include "nestcl_libm.h"
#include "nestcl_philox.h"
#include "specialise.h"

/* Work-items per spike of the delivery kernel on CPU devices (contiguous chunks). */
#define DELIVER_CPU_WIDTH 1u
#include "nestcl_rt_source.h"
#include "core/nestcl_core.h"

/* ---- neurons (the partition: partition.c) ------------------------------- */

static size_t field_len(const nestcl_field *f, uint32_t K)
{
  return nestcl_field_len(f, K);
}

static int redraw_failed(const char *what, const nestcl_value *v)
{
  return nestcl_set_error(NESTCL_EINVAL, "%s: 1000 draws of normal(%g, %g) fell outside [%g, %g] (NEST's redraw limit)",
                          what, v->a, v->b, v->lo, v->hi);
}

static int build_nodes(nestcl_engine *e, eng_vp *vp, eng_block *b)
{
  const eng_population *p = &e->desc.pops[b->pop];
  const nestcl_model *m = p->model;
  b->fields = calloc((size_t)m->n_fields, sizeof *b->fields);
  if (!b->fields) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  size_t state_bytes = 0;
  for (int f = 0; f < m->n_fields; ++f) {
    size_t bytes = nestcl_field_type_size(m->fields[f].type) * field_len(&m->fields[f], p->K) * b->n;
    b->fields[f] = calloc(bytes ? bytes : 1, 1);
    if (!b->fields[f]) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory (%zu bytes for %s.%s)", bytes, m->name,
                              m->fields[f].member);
    }
    state_bytes += bytes;
  }
  for (uint32_t i = 0; i < b->n; ++i) {
    m->set_defaults(b->fields, b->n, i, p->K);
    uint64_t gid = b->first_gid + i;
    for (int k = 0; k < p->n_settings; ++k) {
      double v = eng_draw(&p->settings[k].v, e->desc.cfg.seed, NESTCL_RNG_PURPOSE_INIT, gid, (uint64_t)k);
      if (isnan(v)) {
        return redraw_failed(p->settings[k].name, &p->settings[k].v);
      }
      if (eng_set_value(m, b->fields, b->n, i, p->K, p->settings[k].name, v) != 0) {
        return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: %s = %g rejected: %s", m->name, (unsigned long long)gid,
                                p->settings[k].name, v, nestcl_last_error());
      }
    }
    if (m->init_buffers && m->init_buffers(b->fields, b->n, i, p->K, e->desc.cfg.resolution_ms) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: init_buffers failed: %s", m->name,
                              (unsigned long long)gid, nestcl_last_error());
    }
    if (m->pre_run(b->fields, b->n, i, p->K, e->desc.cfg.resolution_ms) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s neuron %llu: pre_run failed: %s", m->name, (unsigned long long)gid,
                              nestcl_last_error());
    }
  }
  size_t ring_bytes = (size_t)e->clock.ring_slots * b->n_channels * b->n * sizeof(int64_t);
  b->spike_cap = b->n * (uint32_t)e->clock.min_delay;
  b->ring = calloc(ring_bytes ? ring_bytes : 1, 1);
  b->spikes = calloc(b->spike_cap ? b->spike_cap : 1, sizeof *b->spikes);
  int rc = vp->ops->block_arrays(e, vp, b);
  if (rc) {
    return rc;
  }
  if (p->rec_interval_steps) {
    b->rec_elems = (size_t)e->clock.min_delay * eng_rec_width(m, p->K) * b->n;
    b->rec = calloc(b->rec_elems ? b->rec_elems : 1, sizeof(double));
  }
  if (!b->ring || !b->spikes || (p->rec_interval_steps && !b->rec)) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory (ring of %zu bytes)", ring_bytes);
  }
  vp->ops->account(vp, NESTCL_MEM_STATE, state_bytes);
  vp->ops->account(vp, NESTCL_MEM_RING, ring_bytes);
  vp->ops->account(vp, NESTCL_MEM_RECORDING, b->rec_elems * sizeof(double));
  vp->ops->account(vp, NESTCL_MEM_OTHER, (size_t)b->spike_cap * sizeof *b->spikes);
  return 0;
}

/* ---- device (a stream's part: stream_upload.c) -------------------------- */

/*
 * The device memory of the streams: everything resident when it fits the
 * budget (the device's memory, or NESTCL_DEVICE_MEMORY_LIMIT, or the config's
 * device_memory, less what is allocated already). Otherwise the plastic
 * synapses go batched: the rest stays resident and the room left is shared
 * by the (VP, projection) pairs as batch slots; a budget that leaves no room
 * for the longest row of some projection is an error.
 */
static int check_device_budget(nestcl_engine *e)
{
  size_t need = 0, plastic = 0;
  int units = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    need += e->vps[v].ops->device_need(e, &e->vps[v], &plastic, &units);
  }
  const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
  size_t avail = (size_t)info->global_mem_bytes;
  size_t lim = eng_memory_limit_env();
  if (lim < avail) {
    avail = lim;
  }
  if (e->desc.cfg.device_memory > 0 && e->desc.cfg.device_memory < avail) {
    avail = e->desc.cfg.device_memory;
  }
  /* The synapses the build put there already are in `need` too. */
  size_t used = nestcl_device_bytes_total(e->device.dev) - e->device.staged_bytes;
  avail = avail > used ? avail - used : 0;
  if (need <= avail) {
    return 0;
  }
  if (plastic == 0 || need - plastic >= avail) {
    return nestcl_set_error(NESTCL_ENOMEM,
                            "the network needs %zu bytes on device '%s' (%llu synapses) but only %zu bytes are "
                            "available; use fewer neurons, a smaller --gpu-fraction, or more devices",
                            plastic ? need - plastic : need, info->device_name,
                            (unsigned long long)e->stats.local_synapses, avail);
  }
  size_t room = (avail - (need - plastic)) / (size_t)units;
  for (int v = 0; v < e->n_vps; ++v) {
    int rc = e->vps[v].ops->batch(e, &e->vps[v], room);
    if (rc) {
      return rc;
    }
  }
  return 0;
}

/* Parameters equal over a population's GPU neurons become constants of its kernel (specialise.h). */
static int specialisation_options(const nestcl_engine *e, int pop, char *buf, size_t cap)
{
  void *const **sets = malloc((size_t)e->n_vps * sizeof *sets);
  uint32_t *n = malloc((size_t)e->n_vps * sizeof *n);
  if (!sets || !n) {
    free(sets);
    free(n);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int k = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    k += e->vps[v].ops->kernel_block(&e->vps[v], pop, &sets[k], &n[k]);
  }
  nestcl_const_options(e->desc.pops[pop].model, sets, n, k, buf, cap);
  free(sets);
  free(n);
  return 0;
}

static int build_programs(nestcl_engine *e)
{
  int rc = 0;
  e->device.model_programs = calloc((size_t)e->desc.n_pops, sizeof *e->device.model_programs);
  char **opts = calloc((size_t)e->desc.n_pops, sizeof *opts);
  if (!e->device.model_programs || !opts) {
    free(opts);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    opts[p] = malloc(4096);
    if (!opts[p]) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      break;
    }
    if ((rc = specialisation_options(e, p, opts[p], 4096 - 32))) {
      break;
    }
    /* Translated code calls nestcl_glibc_exp(x, NESTCL_LIBM_VARIANT): the variant the C path runs too. */
    size_t used = strlen(opts[p]);
    /* An ODE state vector of A + B K elements gets room for the population's K (NESTCL_K_MAX). */
    snprintf(opts[p] + used, 4096 - used, "%s-DNESTCL_LIBM_VARIANT=%d -DNESTCL_K_MAX=%u", used ? " " : "",
             e->device.libm_fused, e->desc.pops[p].K ? (unsigned)e->desc.pops[p].K : 1u);
    int same = -1;
    for (int q = 0; q < p && same < 0; ++q) {
      if (e->desc.pops[q].model == e->desc.pops[p].model && strcmp(opts[q], opts[p]) == 0) {
        same = q;
      }
    }
    if (same >= 0) {
      e->device.model_programs[p] = e->device.model_programs[same];
      clRetainProgram(e->device.model_programs[p]);
      continue;
    }
    const char *ks = e->desc.pops[p].model->kernel_source;
    size_t len = strlen(nestcl_rt_source) + strlen(ks) + 2;
    char *src = malloc(len);
    if (!src) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      break;
    }
    snprintf(src, len, "%s\n%s", nestcl_rt_source, ks);
    rc = nestcl_program_build(e->device.dev, src, opts[p], &e->device.model_programs[p]);
    free(src);
  }
  for (int p = 0; p < e->desc.n_pops; ++p) {
    free(opts[p]);
  }
  free(opts);
  if (rc) {
    return rc;
  }
  size_t len = strlen(nestcl_rt_source) + strlen(nestcl_engine_kernels_source) + 2;
  char *src = malloc(len);
  if (!src) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(src, len, "%s\n%s", nestcl_rt_source, nestcl_engine_kernels_source);
  char opt[160];
  snprintf(opt, sizeof opt, "%s%s",
           e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? "-DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d"
                                                           : "-DNESTCL_W_T=float -DNESTCL_W_SUFFIX=_f",
           e->device.deliver_contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS=1" : "");
  rc = nestcl_program_build(e->device.dev, src, opt, &e->device.core_program);
  free(src);
  if (!rc && e->desc.any_plastic) {
    rc = eng_plastic_build_programs(e);
  }
  return rc;
}

/* ---- driver ------------------------------------------------------------- */

static int poisson_table(eng_drive *d, double mu, double exp_neg_mu)
{
  return nestcl_poisson_cdf(mu, exp_neg_mu, &d->cdf, &d->cdf_len, &d->kstop);
}

/* Each drive's target channel, fixed-point value, window in steps and Poisson table. */
static int resolve_drives(nestcl_engine *e)
{
  double h = e->desc.cfg.resolution_ms;
  for (int k = 0; k < e->desc.n_drives; ++k) {
    eng_drive *d = &e->desc.drives[k];
    const eng_population *tp = &e->desc.pops[d->pop];
    double value;
    int rc = d->is_poisson ? eng_route_spike(NULL, tp->model, d->weight, d->rport, tp->K, &d->channel, &value)
                           : tp->model->route_current(d->amplitude, 1.0, 0, tp->K, &d->channel, &value);
    if (rc || d->channel < 0 || (uint32_t)d->channel >= tp->n_channels) {
      return nestcl_set_error(NESTCL_EINVAL, "%s rejects the input of generator %d", tp->model->name, k);
    }
    d->value_fixed = nestcl_fixed_from_double(value);
    d->delay_steps = (int)eng_delay_ms_to_steps(d->delay_ms, h);
    d->start_step = d->start_ms > 0.0 ? eng_ms_to_steps(d->start_ms, h) : -1;
    d->stop_step = isfinite(d->stop_ms) ? eng_ms_to_steps(d->stop_ms, h) : INT64_MAX;
    if (d->is_poisson) {
      nestcl_poisson_param pp;
      if (nestcl_poisson_setup(d->rate_hz * h * 1e-3, &pp) != 0) {
        return nestcl_set_error(NESTCL_EINVAL, "poisson_generator rate %g Hz is too high for one stream", d->rate_hz);
      }
      d->chunks = pp.chunks;
      int rc2 = poisson_table(d, pp.mu, pp.exp_neg_mu);
      if (rc2) {
        return rc2;
      }
    } else {
      d->chunks = 0;
      int rc2 = poisson_table(d, 0.0, 1.0); /* a valid one-entry table for the kernel argument */
      if (rc2) {
        return rc2;
      }
    }
  }
  return 0;
}

/* The VPs of this rank (CPU threads first, then streams), each with one block per population. */
static int partition_vps(nestcl_engine *e)
{
  e->vps = calloc((size_t)e->n_vps, sizeof *e->vps);
  e->stats.vp_stats = calloc((size_t)e->n_vps, sizeof *e->stats.vp_stats);
  if (!e->vps || !e->stats.vp_stats) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    eng_vp_set_kind(e, vp, v);
    vp->blocks = calloc((size_t)e->desc.n_pops, sizeof *vp->blocks);
    if (!vp->blocks) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    for (int p = 0; p < e->desc.n_pops; ++p) {
      eng_block *b = &vp->blocks[p];
      uint32_t first, n;
      eng_block_range(e, &e->desc.pops[p], v, e->exchange.rank, e->exchange.n_ranks, &first, &n);
      b->pop = p;
      b->n = n;
      b->first_gid = e->desc.pops[p].first + first;
      b->n_channels = e->desc.pops[p].n_channels;
      if (n > NESTCL_TARGET_INDEX_MASK) {
        return nestcl_set_error(NESTCL_EINVAL,
                                "a VP would hold %u neurons of one population; at most 2^24 (use "
                                "more threads or streams)",
                                n);
      }
      vp->neurons += n;
    }
    vp->st.neurons = vp->neurons;
  }
  return 0;
}

/* The device of the streams, and the delivery kernel's shape on it; nothing without streams. */
static int open_device(nestcl_engine *e)
{
  if (e->desc.cfg.gpu_streams <= 0) {
    return 0;
  }
  /* With plastic synapses each stream gets a second queue, for batch transfers. */
  int rc =
    nestcl_device_open(e->desc.cfg.device, e->desc.cfg.gpu_streams * (e->desc.any_plastic ? 2 : 1), &e->device.dev);
  if (rc) {
    return rc;
  }
  const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
  /*
   * The delivery kernel's shape (engine_kernels.cl): one work-group per spike,
   * of deliver_width work-items. GPUs (and accelerators): 256 lanes striding
   * through the row, so that neighbouring lanes read neighbouring synapses.
   * CPU devices: contiguous chunks, and DELIVER_CPU_WIDTH work-items per spike
   * (1 was best of 1, 2, 4 on PoCL here: delivery 3.2x faster at scale 0.1 and
   * 4.5x at scale 1 than the former spike x lane kernel with 256 strided lanes
   * and the runtime's choice of work-group, medians of 3). NESTCL_DELIVER_WIDTH
   * and NESTCL_DELIVER_MODE (strided, contiguous) override both, for tuning.
   */
  e->device.deliver_contiguous = strcmp(info->type, "cpu") == 0;
  const char *mode = getenv("NESTCL_DELIVER_MODE");
  if (mode && strcmp(mode, "strided") == 0) {
    e->device.deliver_contiguous = 0;
  } else if (mode && strcmp(mode, "contiguous") == 0) {
    e->device.deliver_contiguous = 1;
  }
  /* The build's synapses: written in place where the device's memory is the host's, else sent from pinned copies. */
  e->device.host_unified = nestcl_device_get_info(e->device.dev)->host_unified;
  e->device.stage_map = e->desc.cfg.build_upload == NESTCL_BUILD_UPLOAD_MAP ||
    (e->desc.cfg.build_upload == NESTCL_BUILD_UPLOAD_AUTO && e->device.host_unified);
  e->device.deliver_width = e->device.deliver_contiguous ? DELIVER_CPU_WIDTH : 256u;
  const char *w = getenv("NESTCL_DELIVER_WIDTH");
  if (w && atoi(w) > 0) {
    e->device.deliver_width = (uint32_t)atoi(w);
  }
  return nestcl_device_require(e->device.dev, "the engine");
}

/*
 * The synapses of every VP's blocks (connect.c). With fewer VPs than build
 * threads (a stream VP, above all), the VPs' blocks come one after another,
 * each drawn by all threads; with as many VPs as threads or more, each thread
 * draws whole VPs, as the threads would simulate them. The network is the
 * same either way (connect.c); *bt: the draw's and the CSR's times.
 */
static int build_connections(nestcl_engine *e, eng_build_times *bt)
{
  int threads = e->stats.build_threads;
  if (e->n_vps < threads) {
    int rc = 0;
    for (int v = 0; v < e->n_vps && !rc; ++v) {
      for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
        rc = eng_connect_block(e, &e->vps[v], &e->vps[v].blocks[p], threads, bt);
      }
    }
    return rc;
  }
  eng_build_times *per = calloc((size_t)e->n_vps, sizeof *per);
  if (!per) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < e->desc.n_pops && e->vps[v].status == 0; ++p) {
      eng_vp_fail(&e->vps[v], eng_connect_block(e, &e->vps[v], &e->vps[v].blocks[p], 1, &per[v]));
    }
  }
  /* The VPs drew side by side: the slowest one's times are the build's. */
  for (int v = 0; v < e->n_vps; ++v) {
    bt->draw_s = per[v].draw_s > bt->draw_s ? per[v].draw_s : bt->draw_s;
    bt->csr_s = per[v].csr_s > bt->csr_s ? per[v].csr_s : bt->csr_s;
    bt->device_csrs += per[v].device_csrs;
    bt->host_csrs += per[v].host_csrs;
  }
  free(per);
  return eng_vps_status(e);
}

/* Neurons (each VP its own, in parallel), then synapses; *t_nodes: when the neurons were done. */
static int build_blocks(nestcl_engine *e, double *t_nodes)
{
  int threads = e->n_vps < e->stats.build_threads ? e->n_vps : e->stats.build_threads;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < e->desc.n_pops && e->vps[v].status == 0; ++p) {
      eng_vp_fail(&e->vps[v], build_nodes(e, &e->vps[v], &e->vps[v].blocks[p]));
    }
  }
  *t_nodes = eng_now();
  int rc = eng_vps_status(e);
  if (rc) {
    return rc;
  }
  eng_build_times bt = {0.0, 0.0, 0, 0};
  atomic_init(&e->stats.build_work, 0);
  e->stats.build_work_expected = 2.0 * eng_expected_synapses(e);
  e->stats.build_t0 = e->stats.build_reported = eng_now();
  rc = build_connections(e, &bt);
#ifdef __GLIBC__
  /*
   * The draw's temporaries (chunk counts, the threads' tallies) were freed,
   * but glibc keeps freed heap memory mapped; give it back before the upload
   * allocates what the device loop needs, where the build's peak lies.
   */
  malloc_trim(0);
#endif
  const nestcl_engine_config *c = &e->desc.cfg;
  if (!rc && c->build_progress && e->stats.build_reported > e->stats.build_t0) {
    /* A build long enough to report ends its report. */
    c->build_progress(c->build_progress_arg, 1.0, eng_now() - e->stats.build_t0);
  }
  e->stats.build_draw_s = bt.draw_s;
  e->stats.build_csr_s = bt.csr_s;
  e->stats.build_device_csrs = bt.device_csrs;
  e->stats.build_host_csrs = bt.host_csrs;
  return rc;
}

/* Synapse counts per VP, the out-degree of every source and the totals, over every rank. */
static int count_synapses(nestcl_engine *e)
{
  e->stats.local_synapses = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    e->stats.local_synapses += e->vps[v].synapses;
    e->vps[v].st.synapses = e->vps[v].synapses;
  }
  /* Out-degrees over the whole network, for the synaptic event count. */
  e->exchange.out_degree = calloc(e->desc.n_global ? e->desc.n_global : 1, sizeof *e->exchange.out_degree);
  if (!e->exchange.out_degree) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      for (uint64_t s = 0; s < e->desc.n_global; ++s) {
        e->exchange.out_degree[s] += (uint32_t)(b->row_ptr[s + 1] - b->row_ptr[s]);
      }
      for (int j = 0; j < b->n_plastic; ++j) {
        const eng_plastic *pl = &b->plastic[j];
        for (uint32_t r = 0; r < pl->n_rows; ++r) {
          e->exchange.out_degree[pl->src_first + r] += (uint32_t)(pl->row_ptr[r + 1] - pl->row_ptr[r]);
        }
      }
    }
  }
  e->stats.synapses_total = e->stats.local_synapses;
  e->stats.plastic_synapses_total = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    e->stats.plastic_synapses_total += e->vps[v].st.plastic_synapses;
  }
  /* Totals over every rank (each a no-op on one rank). */
  eng_mpi_allreduce(e, &e->stats.plastic_synapses_total, 1, ENG_MPI_U64, ENG_MPI_SUM);
  eng_mpi_allreduce(e, e->exchange.out_degree, (int)e->desc.n_global, ENG_MPI_U32, ENG_MPI_SUM);
  eng_mpi_allreduce(e, &e->stats.synapses_total, 1, ENG_MPI_U64, ENG_MPI_SUM);
  return 0;
}

/* The super step's spike lists: the global one, its gather buffer, the spiking sources, each VP's own. */
static int alloc_spike_lists(nestcl_engine *e)
{
  e->exchange.mpi_counts = calloc(2 * (size_t)e->exchange.n_ranks, sizeof *e->exchange.mpi_counts);
  if (!e->exchange.mpi_counts) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->exchange.global_cap = e->desc.n_global * (size_t)e->clock.min_delay;
  e->exchange.global = malloc(2 * e->exchange.global_cap * sizeof *e->exchange.global);
  e->exchange.gather_tmp = malloc(2 * e->exchange.global_cap * sizeof *e->exchange.gather_tmp);
  if (!e->exchange.global || !e->exchange.gather_tmp) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
  }
  if (e->desc.any_plastic) {
    e->exchange.src_list =
      malloc(3 * (e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_list);
    e->exchange.src_lags = malloc((e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_lags);
    e->exchange.src_q = malloc((e->exchange.global_cap ? e->exchange.global_cap : 1) * sizeof *e->exchange.src_q);
    if (!e->exchange.src_list || !e->exchange.src_lags || !e->exchange.src_q) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
    }
  }
  for (int v = 0; v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    vp->out_cap = vp->neurons * (size_t)e->clock.min_delay;
    vp->out = malloc(2 * (vp->out_cap ? vp->out_cap : 1) * sizeof *vp->out);
    if (!vp->out) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike lists");
    }
  }
  return 0;
}

/* The device's part: budget check, programs, Poisson tables, the stream VPs' buffers and blocks, the device loop. */
static int upload_device(nestcl_engine *e)
{
  if (!e->device.dev) {
    return 0;
  }
  int rc = check_device_budget(e);
  if (!rc)
    rc = eng_kernel_profile_open(e);
  if (!rc)
    rc = build_programs(e);
  for (int k = 0; k < e->desc.n_drives && !rc; ++k) {
    eng_drive *d = &e->desc.drives[k];
    rc = nestcl_buffer_alloc(e->device.dev, NESTCL_MEM_OTHER, "poisson table", d->cdf_len * sizeof(double),
                             CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, d->cdf, &d->b_cdf);
  }
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    rc = e->vps[v].ops->upload(e, &e->vps[v]);
  }
  /* The device loop, where it applies (resident.c); its stream VP becomes the resident kind. */
  if (!rc)
    rc = eng_resident_setup(e);
  /* A whole super step as one command buffer, where the device offers them (resident_graph.c). */
  if (!rc && e->device.res.on)
    rc = eng_resident_graph_setup(e, &e->vps[e->device.res.vp]);
  if (!rc && e->device.res.on) {
    eng_vp_set_kind(e, &e->vps[e->device.res.vp], e->device.res.vp);
  }
  return rc;
}

int eng_build(nestcl_engine *e)
{
  double t0 = eng_now();
  if (e->desc.cfg.use_mpi && !eng_mpi_initialised()) {
    return nestcl_set_error(NESTCL_EINVAL, "use_mpi set but MPI is not initialised");
  }
  eng_world(e, &e->exchange.rank, &e->exchange.n_ranks);
  if (e->desc.n_pops == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "no neurons to simulate");
  }
  /* glibc's exp/pow as the host computes them (NEST's results); an unknown libm gets the FMA variant. */
  e->device.libm_fused = nestcl_libm_exp_fused() != 0;
  e->desc.any_plastic = 0;
  for (int p = 0; p < e->desc.n_projs; ++p) {
    e->desc.any_plastic |= e->desc.projs[p].sm != NULL;
  }
  e->n_vps = e->desc.cfg.cpu_threads + e->desc.cfg.gpu_streams;
  e->stats.build_threads = eng_build_thread_count(e);
  uint64_t total_vps = (uint64_t)e->n_vps * (uint64_t)e->exchange.n_ranks;
  if (total_vps > e->desc.n_global) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "more virtual processes (%llu = %d ranks x (%d threads + %d streams)) than "
                            "neurons (%llu)",
                            (unsigned long long)total_vps, e->exchange.n_ranks, e->desc.cfg.cpu_threads,
                            e->desc.cfg.gpu_streams, (unsigned long long)e->desc.n_global);
  }
  int64_t lo, hi;
  eng_delay_steps(e, &lo, &hi);
  e->clock.min_delay = (int)lo;
  e->clock.max_delay = (int)hi;
  e->clock.ring_slots = (int)(lo + hi);

  int rc = resolve_drives(e);
  if (!rc)
    rc = partition_vps(e);
  if (!rc)
    rc = open_device(e);
  if (rc) {
    return rc;
  }
  /* Admission: refuse what cannot fit before building anything (estimate.c). */
  int adm = eng_admit(e);
  if (adm) {
    return adm;
  }

  /*
   * A stream's plastic synapses are drawn into device memory too unless they
   * may have to go batched. NESTCL_TEST_STAGE_PLASTIC (a test hook, as
   * tests/engine/test_engine_build.c uses it) stages them whatever the
   * estimate says, for the budget's check to bring back (stream_upload.c).
   */
  e->device.stage_plastic =
    e->device.dev && e->desc.any_plastic && (eng_estimate_resident(e) || getenv("NESTCL_TEST_STAGE_PLASTIC"));
  /* The device draws the streams' synapses where it pays (connect_device.c). */
  rc = eng_conn_device_setup(e);
  if (rc) {
    return rc;
  }
  double t_nodes = 0.0;
  rc = build_blocks(e, &t_nodes);
  if (rc) {
    return rc;
  }
  e->stats.build_nodes_s = t_nodes - t0;
  rc = count_synapses(e);
  if (rc) {
    return rc;
  }
  double t1 = eng_now();
  e->stats.build_conn_s = t1 - t_nodes;

  rc = alloc_spike_lists(e);
  if (!rc)
    rc = upload_device(e);
  if (rc) {
    return rc;
  }
  e->stats.build_upload_s = eng_now() - t1;
  return 0;
}

/* A block's host arrays, device buffers, plastic synapses and kernels (eng_free_built). */
static void free_block(nestcl_engine *e, eng_block *b, const nestcl_model *m)
{
  for (int k = 0; k < 3; ++k) {
    eng_stream_stage_finish(e, &b->stage[k]); /* a build that failed may leave them under way */
  }
  for (int j = 0; b->plastic && j < b->n_plastic; ++j) {
    for (int k = 0; k < 4; ++k) {
      eng_stream_stage_finish(e, &b->plastic[j].stage[k]);
    }
  }
  if (b->fields) {
    for (int f = 0; f < m->n_fields; ++f) {
      free(b->fields[f]);
    }
  }
  free(b->fields);
  free(b->ring);
  free(b->spikes);
  free(b->spike_offsets);
  free(b->rec);
  free(b->row_ptr);
  free(b->target);
  free(b->weight);
  free(b->delay);
  if (e->device.dev) {
    if (b->b_fields) {
      for (int f = 0; f < m->n_fields; ++f) {
        nestcl_buffer_free(e->device.dev, &b->b_fields[f]);
      }
    }
    nestcl_buffer_free(e->device.dev, &b->b_ring);
    nestcl_buffer_free(e->device.dev, &b->b_count);
    nestcl_buffer_free(e->device.dev, &b->b_spikes);
    nestcl_buffer_free(e->device.dev, &b->b_rec);
    nestcl_buffer_free(e->device.dev, &b->b_offsets);
    nestcl_buffer_free(e->device.dev, &b->b_row);
    nestcl_buffer_free(e->device.dev, &b->b_target);
    nestcl_buffer_free(e->device.dev, &b->b_weight);
    nestcl_buffer_free(e->device.dev, &b->b_delay);
  }
  free(b->b_fields);
  eng_plastic_free(e, b);
  if (b->k_update)
    clReleaseKernel(b->k_update);
  if (b->k_deliver)
    clReleaseKernel(b->k_deliver);
  if (b->k_drive)
    clReleaseKernel(b->k_drive);
}

void eng_free_built(nestcl_engine *e)
{
  eng_kernel_profile_close(e);
  for (int v = 0; e->vps && v < e->n_vps; ++v) {
    eng_vp *vp = &e->vps[v];
    for (int p = 0; vp->blocks && p < e->desc.n_pops; ++p) {
      free_block(e, &vp->blocks[p], e->desc.pops[p].model);
    }
    if (e->device.dev) {
      nestcl_buffer_free(e->device.dev, &vp->b_global);
      nestcl_buffer_free(e->device.dev, &vp->b_srcs);
      nestcl_buffer_free(e->device.dev, &vp->b_lags);
    }
    free(vp->blocks);
    free(vp->out);
    free(vp->syn_scratch);
  }
  free(e->vps);
  e->vps = NULL;
  free(e->stats.vp_stats);
  e->stats.vp_stats = NULL;
  if (e->device.model_programs) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      if (e->device.model_programs[p])
        clReleaseProgram(e->device.model_programs[p]);
    }
  }
  free(e->device.model_programs);
  e->device.model_programs = NULL;
  if (e->device.plastic_programs) {
    for (int p = 0; p < e->desc.n_projs; ++p) {
      if (e->device.plastic_programs[p])
        clReleaseProgram(e->device.plastic_programs[p]);
    }
  }
  free(e->device.plastic_programs);
  e->device.plastic_programs = NULL;
  if (e->device.core_program)
    clReleaseProgram(e->device.core_program);
  e->device.core_program = NULL;
  eng_conn_device_free(e);
  for (int k = 0; k < e->desc.n_drives; ++k) {
    if (e->device.dev) {
      nestcl_buffer_free(e->device.dev, &e->desc.drives[k].b_cdf);
    }
    free(e->desc.drives[k].cdf);
    e->desc.drives[k].cdf = NULL;
  }
  /* The recorded super step before the kernels and buffers it was recorded with. */
  eng_resident_graph_free(e);
  eng_resident_free(e);
  if (e->device.dev)
    nestcl_device_close(e->device.dev);
  e->device.dev = NULL;
  free(e->exchange.global);
  free(e->exchange.gather_tmp);
  free(e->exchange.out_degree);
  free(e->exchange.src_list);
  free(e->exchange.src_lags);
  free(e->exchange.src_q);
  e->exchange.src_list = e->exchange.src_lags = e->exchange.src_q = NULL;
  free(e->exchange.mpi_counts);
  e->exchange.mpi_counts = NULL;
  e->exchange.global = e->exchange.gather_tmp = e->exchange.out_degree = NULL;
  e->built = 0;
}
