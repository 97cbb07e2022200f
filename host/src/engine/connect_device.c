/*
 * A stream's synapses drawn by its device (issue 40; docs/architecture.md,
 * "Building the network"): the kernels of connect_kernels.cl run the host's
 * two passes (connect.c) from the same counter-based streams
 * (nestcl_connect.h), straight into the block's buffers, so nothing of them
 * crosses the bus but the row pointers, which the host keeps, and a few
 * tallies. The network is the one the host would draw, bit for bit.
 *
 * The device draws fixed_total_number, pairwise_bernoulli and fixed_indegree
 * with multapses: the rules whose draws need no state beyond their unit's
 * (the host's marks against multapses would be an array per work-item). A
 * static synapse's drawn weight is routed by its sign, which the target model
 * is checked to do (as plastic delivery needs: eng_plastic_route); a
 * translated synapse's weight must be constant (a drawn one goes through the
 * model's set_status on the host). Whatever the device reports that the host
 * must word itself (a failed redraw, a delay out of range, a bernoulli gap
 * that the host's log1p might floor otherwise) makes the host draw the block.
 *
 * Where the device draws (build_on auto): a GPU or accelerator, which has far
 * more lanes than the host has cores; not a CPU device (PoCL), whose compute
 * units are the host's own cores: the build threads draw as fast there
 * without a kernel's build and launches. --build-on forces either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect_internal.h"
#include "connect_kernels_source.h"
#include "nestcl_rt_source.h"
#include "core/nestcl_core.h"

/* Device memory for a projection's chunk counts: at most this, or the synapses' own targets' size if more. */
#define CONN_COUNTS_MIN_BYTES ((size_t)64 << 20)

int eng_conn_device_setup(nestcl_engine *e)
{
  e->device.draw_on_device = 0;
  if (!e->device.dev || e->desc.cfg.build_on == NESTCL_BUILD_ON_HOST) {
    return 0;
  }
  const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
  e->device.draw_on_device = e->desc.cfg.build_on == NESTCL_BUILD_ON_DEVICE || strcmp(info->type, "cpu") != 0;
  if (!e->device.draw_on_device) {
    return 0;
  }
  size_t len = strlen(nestcl_rt_source) + strlen(nestcl_connect_kernels_source) + 2;
  char *src = malloc(len);
  if (!src) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(src, len, "%s\n%s", nestcl_rt_source, nestcl_connect_kernels_source);
  int rc = nestcl_program_build(e->device.dev, src, "", &e->device.connect_program);
  free(src);
  if (rc && e->desc.cfg.build_on == NESTCL_BUILD_ON_AUTO) {
    /* Not asked for: the host draws, as it would on a CPU device. */
    e->device.draw_on_device = 0;
    return 0;
  }
  return rc;
}

void eng_conn_device_free(nestcl_engine *e)
{
  if (e->device.connect_program) {
    clReleaseProgram(e->device.connect_program);
  }
  e->device.connect_program = NULL;
}

/*
 * Whether the device can draw projection q, and a drawn weight's channel by
 * its sign (static synapses: ch[0..2] for > 0, < 0, == 0).
 */
static int eligible(const nestcl_engine *e, const cn_proj *q, uint32_t ch[3])
{
  const eng_projection *pr = q->pr;
  int rule = pr->conn.rule == NESTCL_RULE_FIXED_TOTAL_NUMBER || pr->conn.rule == NESTCL_RULE_PAIRWISE_BERNOULLI ||
    (pr->conn.rule == NESTCL_RULE_FIXED_INDEGREE && pr->conn.allow_multapses);
  if (!rule) {
    return 0;
  }
  if (pr->sm) {
    /* Resident (not batched), constant weights: a drawn one is checked by the model's set_status. */
    return e->device.stage_plastic && pr->syn.weight.kind == NESTCL_DIST_CONSTANT;
  }
  if (pr->syn.weight.kind == NESTCL_DIST_CONSTANT) {
    ch[0] = ch[1] = ch[2] = (uint32_t)q->ch_const;
    return 1;
  }
  static const double probes[] = {1.0, 2.5, 1e-3, 1e6, -1.0, -2.5, -1e-3, -1e6, 0.0};
  for (int k = 0; k < 9; ++k) {
    int c;
    double v;
    if (eng_route_spike(q->sp->model, q->tp->model, probes[k], pr->syn.rport, q->tp->K, &c, &v) != 0 ||
        v != probes[k] || c < 0 || (uint32_t)c >= q->tp->n_channels) {
      return 0;
    }
    uint32_t *slot = &ch[probes[k] > 0.0 ? 0 : probes[k] < 0.0 ? 1 : 2];
    if (k != 0 && k != 4 && k != 8 && *slot != (uint32_t)c) {
      return 0;
    }
    *slot = (uint32_t)c;
  }
  return 1;
}

/* One projection's draw on the device: its description, chunk counts and tallies. */
typedef struct dv_proj {
  cl_ulong w[NESTCL_CW_WORDS];
  double d[NESTCL_CD_DOUBLES];
  uint64_t chunks;
  nestcl_buffer b_w, b_d, b_ftn, b_cnt, b_max;
} dv_proj;

/* The words and doubles of projection q onto block b, for chunks of per units. */
static void describe(const nestcl_engine *e, const cn_proj *q, const uint32_t ch[3], uint64_t per, dv_proj *v)
{
  const eng_projection *pr = q->pr;
  const nestcl_value *dl = &pr->syn.delay_ms, *wt = &pr->syn.weight;
  cl_ulong *w = v->w;
  memset(v, 0, sizeof *v);
  w[NESTCL_CW_RULE] = q->r.rule;
  w[NESTCL_CW_P] = q->r.p;
  w[NESTCL_CW_SEED] = q->r.seed;
  w[NESTCL_CW_N_SRC] = q->r.n_src;
  w[NESTCL_CW_N_TGT] = q->r.n_tgt;
  w[NESTCL_CW_SRC_FIRST] = q->r.src_first;
  w[NESTCL_CW_TGT_FIRST] = q->r.tgt_first;
  w[NESTCL_CW_LO] = q->r.lo;
  w[NESTCL_CW_HI] = q->r.hi;
  w[NESTCL_CW_DEGREE] = q->r.degree;
  w[NESTCL_CW_NO_AUTAPSE] = (cl_ulong)q->r.no_autapse;
  w[NESTCL_CW_UNIT0] = q->unit0;
  w[NESTCL_CW_UNITS] = q->n_units;
  w[NESTCL_CW_PER_CHUNK] = per;
  w[NESTCL_CW_TICS_PER_STEP] = (cl_ulong)eng_tics_per_step(e->desc.cfg.resolution_ms);
  w[NESTCL_CW_MIN_DELAY] = (cl_ulong)e->clock.min_delay;
  w[NESTCL_CW_MAX_DELAY] = (cl_ulong)e->clock.max_delay;
  w[NESTCL_CW_DELAY_KIND] = (cl_ulong)dl->kind;
  w[NESTCL_CW_DELAY_CONST] = q->delay_steps;
  w[NESTCL_CW_WEIGHT_KIND] = (cl_ulong)wt->kind;
  w[NESTCL_CW_CH_CONST] = (cl_ulong)(q->route_const && !pr->sm ? q->ch_const : 0);
  w[NESTCL_CW_CH_POS] = ch[0];
  w[NESTCL_CW_CH_NEG] = ch[1];
  w[NESTCL_CW_CH_ZERO] = ch[2];
  w[NESTCL_CW_ROW0] = q->row0;
  w[NESTCL_CW_PLASTIC] = pr->sm != NULL;
  w[NESTCL_CW_WEIGHT_DOUBLE] = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  w[NESTCL_CW_WEIGHT_OFF] = pr->sm ? pr->lay.weight_off : 0;
  double *d = v->d;
  d[NESTCL_CD_L1P] = q->r.l1p;
  d[NESTCL_CD_DELAY_A] = dl->a;
  d[NESTCL_CD_DELAY_B] = dl->b;
  d[NESTCL_CD_DELAY_LO] = dl->lo;
  d[NESTCL_CD_DELAY_HI] = dl->hi;
  d[NESTCL_CD_WEIGHT_A] = wt->a;
  d[NESTCL_CD_WEIGHT_B] = wt->b;
  d[NESTCL_CD_WEIGHT_LO] = wt->lo;
  d[NESTCL_CD_WEIGHT_HI] = wt->hi;
  d[NESTCL_CD_VALUE_CONST] = pr->sm ? wt->a : q->value_const;
  v->chunks = per ? (q->n_units + per - 1) / per : 0;
}

/* A draw on one stream's device: the block, its projections, the buffers they share, the kernels. */
typedef struct dv_draw {
  nestcl_engine *e;
  eng_vp *vp;
  eng_block *b;
  cn_device_out *o;
  cl_command_queue q;
  dv_proj *v;
  int n;
  nestcl_buffer b_status, b_rows, b_tcount, b_tmaxd, b_fields, b_tmpl;
  cl_kernel k_count, k_rows, k_fill;
  cl_int status[NESTCL_CONN_STATUS_WORDS];
  /* The tallies and the largest |weight|, given to o only when the device drew it all. */
  uint32_t *indegree, *nin;
  double *maxd, max_abs;
} dv_draw;

/* A device buffer; a refusal (no room) is no error here: *room 0, the host draws instead. */
static int dv_alloc(dv_draw *x, nestcl_buffer *buf, const char *what, size_t bytes, const void *init, int *room)
{
  if (!*room) {
    return 0;
  }
  int rc =
    nestcl_buffer_alloc(x->e->device.dev, NESTCL_MEM_OTHER, what, bytes,
                        CL_MEM_READ_WRITE | (init && bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes ? init : NULL, buf);
  if (rc == NESTCL_ENOMEM) {
    *room = 0;
    return 0;
  }
  return rc;
}

/*
 * words 32-bit words of buf set to zero, from the host: untouched calloc'ed
 * pages cost no host memory, and a transfer, unlike the simulator's view of a
 * kernel's or a fill's zeros, counts as initialised under oclgrind
 * (docs/oclgrind-reports.md).
 */
static cl_int dv_zero(dv_draw *x, const nestcl_buffer *buf, size_t words)
{
  if (!words) {
    return CL_SUCCESS;
  }
  void *zeros = calloc(words, 4);
  if (!zeros) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_int err = clEnqueueWriteBuffer(x->q, buf->mem, CL_TRUE, 0, words * 4, zeros, 0, NULL, NULL);
  free(zeros);
  return err;
}

/*
 * Projection k's description, chunk counts (zeroed) and chunk maxima on the
 * device; chunks of units small enough for the counts to take at most the
 * larger of CONN_COUNTS_MIN_BYTES and the synapses' own targets.
 */
static int dv_plan(dv_draw *x, const cn_proj *q, const uint32_t ch[3], dv_proj *v, int *room)
{
  const nestcl_engine *e = x->e;
  double expect = (double)q->n_units * (double)q->r.n_src; /* the counts' entries with per 1 */
  double targets = (double)(q->r.hi - q->r.lo), synapses = (double)q->r.degree * targets;
  if (q->pr->conn.rule == NESTCL_RULE_PAIRWISE_BERNOULLI) {
    synapses = q->pr->conn.p * (double)q->r.n_src * targets; /* expected */
  }
  double cap = 4.0 * synapses > (double)CONN_COUNTS_MIN_BYTES ? 4.0 * synapses : (double)CONN_COUNTS_MIN_BYTES;
  uint64_t per = 1;
  while (4.0 * expect / (double)per > cap) {
    per *= 2;
  }
  if (q->pr->conn.rule == NESTCL_RULE_FIXED_TOTAL_NUMBER) {
    per = 1; /* a unit is a chunk of 256 targets already */
  }
  describe(e, q, ch, per, v);
  uint32_t n_ftn = (q->r.n_tgt + NESTCL_FTN_CHUNK - 1) / NESTCL_FTN_CHUNK;
  uint64_t zero = 0;
  int rc =
    dv_alloc(x, &v->b_ftn, "build: ftn counts", q->ftn ? n_ftn * sizeof(uint64_t) : 8, q->ftn ? q->ftn : &zero, room);
  if (!rc)
    rc = dv_alloc(x, &v->b_w, "build: projection", sizeof v->w, v->w, room);
  if (!rc)
    rc = dv_alloc(x, &v->b_d, "build: projection", sizeof v->d, v->d, room);
  if (!rc)
    rc = dv_alloc(x, &v->b_cnt, "build: chunk counts", v->chunks * q->r.n_src * 4, NULL, room);
  if (!rc)
    rc = dv_alloc(x, &v->b_max, "build: chunk maxima", (v->chunks ? v->chunks : 1) * 8, NULL, room);
  if (!rc && *room)
    rc = eng_cl_check(dv_zero(x, &v->b_cnt, v->chunks * q->r.n_src), "zeroing the build's counts");
  return rc;
}

/* The kernels' arguments of pass 0 and the rows, and their launches for projection v. */
static cl_int dv_count(dv_draw *x, dv_proj *v)
{
  size_t units = v->w[NESTCL_CW_UNITS], rows = v->w[NESTCL_CW_N_SRC];
  cl_int err = clSetKernelArg(x->k_count, 0, sizeof(cl_mem), &v->b_w.mem);
  err |= clSetKernelArg(x->k_count, 1, sizeof(cl_mem), &v->b_d.mem);
  err |= clSetKernelArg(x->k_count, 2, sizeof(cl_mem), &v->b_ftn.mem);
  err |= clSetKernelArg(x->k_count, 3, sizeof(cl_mem), &v->b_cnt.mem);
  err |= clSetKernelArg(x->k_count, 4, sizeof(cl_mem), &x->b_tcount.mem);
  err |= clSetKernelArg(x->k_count, 5, sizeof(cl_mem), &x->b_tmaxd.mem);
  err |= clSetKernelArg(x->k_count, 6, sizeof(cl_mem), &x->b_status.mem);
  err |= clSetKernelArg(x->k_rows, 0, sizeof(cl_mem), &v->b_w.mem);
  err |= clSetKernelArg(x->k_rows, 1, sizeof(cl_mem), &v->b_cnt.mem);
  err |= clSetKernelArg(x->k_rows, 2, sizeof(cl_mem), &x->b_rows.mem);
  if (err == CL_SUCCESS && units) {
    err = clEnqueueNDRangeKernel(x->q, x->k_count, 1, NULL, &units, NULL, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS && units && rows) {
    err = clEnqueueNDRangeKernel(x->q, x->k_rows, 1, NULL, &rows, NULL, 0, NULL, NULL);
  }
  return err;
}

/* Projection v's tallies per target (read back after its pass 0) into the block's. */
static cl_int dv_tallies(dv_draw *x, const cn_proj *q, uint32_t *tcount, uint32_t *tmaxd)
{
  uint32_t n = q->n_units ? x->b->n : 0; /* no units: no synapses, and the kernel did not run */
  cl_int err = clEnqueueReadBuffer(x->q, x->b_tcount.mem, CL_TRUE, 0, (size_t)n * 4, tcount, 0, NULL, NULL);
  if (err == CL_SUCCESS && x->o->history && q->pr->sm->uses_history) {
    err = clEnqueueReadBuffer(x->q, x->b_tmaxd.mem, CL_TRUE, 0, (size_t)n * 4, tmaxd, 0, NULL, NULL);
  }
  double ms_per_step = eng_delay_ms(x->e, 1);
  for (uint32_t i = 0; i < n && err == CL_SUCCESS; ++i) {
    x->indegree[i] += tcount[i];
    if (x->o->history && q->pr->sm->uses_history && tcount[i]) {
      x->nin[i] += tcount[i];
      double dms = (double)tmaxd[i] * ms_per_step; /* the largest of d * h is that of d, times h */
      x->maxd[i] = dms > x->maxd[i] ? dms : x->maxd[i];
    }
  }
  return err;
}

/*
 * The delays' reference from the constant ones, as the host's draw has it
 * (connect.c): the first constant delay, and whether another differs.
 */
static void dv_status_init(dv_draw *x, const cn_proj *pj)
{
  memset(x->status, 0, sizeof x->status);
  x->status[NESTCL_CONN_STATUS_DELAY_REF] = -1;
  for (int k = 0; k < x->n; ++k) {
    if (!pj[k].delay_const) {
      continue;
    }
    if (x->status[NESTCL_CONN_STATUS_DELAY_REF] < 0) {
      x->status[NESTCL_CONN_STATUS_DELAY_REF] = pj[k].delay_steps;
    } else if (x->status[NESTCL_CONN_STATUS_DELAY_REF] != pj[k].delay_steps) {
      x->status[NESTCL_CONN_STATUS_DELAYS_DIFFER] = 1;
    }
  }
}

/* The kernels, the shared buffers and every projection's plan; *room 0: the device has no room for them. */
static int dv_setup(dv_draw *x, cn_proj *pj, const uint32_t (*ch)[3], int *room)
{
  cl_int err;
  cl_program prog = x->e->device.connect_program;
  x->k_count = clCreateKernel(prog, "nestcl_conn_count", &err);
  if (err == CL_SUCCESS)
    x->k_rows = clCreateKernel(prog, "nestcl_conn_rows", &err);
  if (err == CL_SUCCESS)
    x->k_fill = clCreateKernel(prog, "nestcl_conn_fill", &err);
  int rc = eng_cl_check(err, "clCreateKernel(nestcl_conn_*)");
  size_t n = x->b->n ? x->b->n : 1;
  x->indegree = calloc(n, sizeof *x->indegree);
  x->nin = calloc(n, sizeof *x->nin);
  x->maxd = calloc(n, sizeof *x->maxd);
  if (!rc && (!x->indegree || !x->nin || !x->maxd)) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  dv_status_init(x, pj);
  if (!rc)
    rc = dv_alloc(x, &x->b_status, "build: status", sizeof x->status, x->status, room);
  if (!rc)
    rc = dv_alloc(x, &x->b_rows, "build: row lengths", (x->o->n_rows + 1) * 8, NULL, room);
  if (!rc)
    rc = dv_alloc(x, &x->b_tcount, "build: tallies", n * 4, NULL, room);
  if (!rc)
    rc = dv_alloc(x, &x->b_tmaxd, "build: tallies", n * 4, NULL, room);
  for (int k = 0; k < x->n && !rc && *room; ++k) {
    rc = dv_plan(x, &pj[k], ch[k], &x->v[k], room);
  }
  if (!rc && *room) {
    err = dv_zero(x, &x->b_rows, 2 * (x->o->n_rows + 1));
    err |= dv_zero(x, &x->b_tcount, n);
    err |= dv_zero(x, &x->b_tmaxd, n);
    rc = eng_cl_check(err, "zeroing the build's counts");
  }
  return rc;
}

static void dv_release(dv_draw *x)
{
  nestcl_device *dev = x->e->device.dev;
  for (int k = 0; x->v && k < x->n; ++k) {
    nestcl_buffer_free(dev, &x->v[k].b_w);
    nestcl_buffer_free(dev, &x->v[k].b_d);
    nestcl_buffer_free(dev, &x->v[k].b_ftn);
    nestcl_buffer_free(dev, &x->v[k].b_cnt);
    nestcl_buffer_free(dev, &x->v[k].b_max);
  }
  free(x->v);
  free(x->indegree);
  free(x->nin);
  free(x->maxd);
  nestcl_buffer *own[] = {&x->b_status, &x->b_rows, &x->b_tcount, &x->b_tmaxd, &x->b_fields, &x->b_tmpl};
  for (size_t k = 0; k < sizeof own / sizeof *own; ++k) {
    nestcl_buffer_free(dev, own[k]);
  }
  cl_kernel ks[] = {x->k_count, x->k_rows, x->k_fill};
  for (int k = 0; k < 3; ++k) {
    if (ks[k]) {
      clReleaseKernel(ks[k]);
    }
  }
}

/* Pass 0 of every projection, in order, and its tallies; *bits: what the device says the host must redo. */
static int dv_pass0(dv_draw *x, cn_proj *pj, int *bits)
{
  size_t n = x->b->n ? x->b->n : 1;
  uint32_t *tcount = malloc(n * sizeof *tcount), *tmaxd = malloc(n * sizeof *tmaxd);
  cl_int err = tcount && tmaxd ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  for (int k = 0; k < x->n && err == CL_SUCCESS; ++k) {
    err = dv_count(x, &x->v[k]);
    if (err == CL_SUCCESS) {
      err = dv_tallies(x, &pj[k], tcount, tmaxd);
    }
  }
  free(tcount);
  free(tmaxd);
  if (err == CL_SUCCESS) {
    err = clEnqueueReadBuffer(x->q, x->b_status.mem, CL_TRUE, 0, sizeof x->status, x->status, 0, NULL, NULL);
  }
  *bits = x->status[NESTCL_CONN_STATUS_BITS];
  return eng_cl_check(err, "the build's first pass on the device");
}

/*
 * The row lengths read back into the host's row pointers (their prefix sums
 * written back for pass 1); *nnz, *max_row; rows of 2^32 synapses refused.
 */
static int dv_rows(dv_draw *x, uint64_t *nnz, uint32_t *max_row)
{
  uint64_t *rp = x->o->row_ptr, n_rows = x->o->n_rows;
  cl_int err = clEnqueueReadBuffer(x->q, x->b_rows.mem, CL_TRUE, 0, (n_rows + 1) * 8, rp, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return eng_cl_check(err, "reading the build's rows back");
  }
  rp[0] = 0;
  uint64_t longest = 0;
  for (uint64_t g = 0; g < n_rows; ++g) {
    longest = rp[g + 1] > longest ? rp[g + 1] : longest;
    rp[g + 1] += rp[g];
  }
  if (longest > UINT32_MAX) {
    return nestcl_set_error(NESTCL_EINVAL, "a source has more than 2^32 synapses onto one block (use more VPs)");
  }
  *nnz = rp[n_rows];
  *max_row = (uint32_t)longest;
  err = clEnqueueWriteBuffer(x->q, x->b_rows.mem, CL_TRUE, 0, (n_rows + 1) * 8, rp, 0, NULL, NULL);
  return eng_cl_check(err, "writing the build's rows");
}

/* An output buffer of pass 1: the block's (or set's) own, allocated before the budget's check (which counts it). */
static int dv_output(dv_draw *x, nestcl_buffer *buf, const char *what, size_t bytes)
{
  int rc = nestcl_buffer_alloc(x->e->device.dev, NESTCL_MEM_SYNAPSES, what, bytes, CL_MEM_READ_WRITE, NULL, buf);
  if (!rc) {
    x->e->device.staged_bytes += bytes;
  }
  return rc;
}

static void dv_output_free(dv_draw *x, nestcl_buffer *buf)
{
  x->e->device.staged_bytes -= buf->bytes;
  nestcl_buffer_free(x->e->device.dev, buf);
}

/*
 * A plastic set's per-synapse fields other than the weight, from the
 * template (what eng_plastic_init_state does on the host): (offset, size,
 * offset in tmpl) triples and the template's bytes, to the device.
 */
static int dv_fields(dv_draw *x, const eng_projection *pr, cl_ulong *n_fields)
{
  const eng_syn_layout *L = &pr->lay;
  cl_ulong f3[3 * ENG_SYN_FIELDS_MAX + 3] = {0};
  unsigned char tmpl[8 * ENG_SYN_FIELDS_MAX + 8] = {0};
  size_t used = 0;
  cl_ulong n = 0;
  for (int f = 0; f < L->n_state; ++f) {
    if (L->state_f[f] == L->weight_f) {
      continue;
    }
    const nestcl_syn_field *fd = &pr->sm->fields[L->state_f[f]];
    size_t z = eng_syn_field_size(fd);
    if (used + z > sizeof tmpl) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: per-synapse state too large for the device's build", pr->sm->name);
    }
    memcpy(tmpl + used, (const unsigned char *)pr->tmpl + fd->offset, z);
    f3[3 * n] = L->state_off[f];
    f3[3 * n + 1] = z;
    f3[3 * n + 2] = used;
    used += z;
    n++;
  }
  *n_fields = n;
  int room = 1;
  int rc = dv_alloc(x, &x->b_fields, "build: synapse fields", sizeof f3, f3, &room);
  if (!rc)
    rc = dv_alloc(x, &x->b_tmpl, "build: synapse template", sizeof tmpl, tmpl, &room);
  return rc ? rc : (room ? 0 : nestcl_set_error(NESTCL_ENOMEM, "no device memory for the build"));
}

/* Pass 1 of projection v into the output buffers (t, w, dl: targets, weights or state, delays). */
static cl_int dv_fill(dv_draw *x, dv_proj *v, const nestcl_buffer *t, const nestcl_buffer *w, const nestcl_buffer *dl,
                      double *max_abs)
{
  int plastic = (int)v->w[NESTCL_CW_PLASTIC];
  cl_int err = clEnqueueWriteBuffer(x->q, v->b_w.mem, CL_TRUE, 0, sizeof v->w, v->w, 0, NULL, NULL);
  const nestcl_buffer *args[] = {&v->b_w, &v->b_d, &v->b_ftn,       &x->b_rows,   &v->b_cnt,  t,         w,
                                 w,       dl,      plastic ? w : t, &x->b_fields, &x->b_tmpl, &v->b_max, &x->b_status};
  for (cl_uint a = 0; a < 14 && err == CL_SUCCESS; ++a) {
    const nestcl_buffer *b = args[a];
    /* A buffer the kernel does not use stands in for the one it has no need of (the state of a static CSR). */
    cl_mem m = b->mem ? b->mem : x->b_status.mem;
    err = clSetKernelArg(x->k_fill, a, sizeof(cl_mem), &m);
  }
  size_t chunks = v->chunks;
  if (err == CL_SUCCESS && chunks) {
    err = clEnqueueNDRangeKernel(x->q, x->k_fill, 1, NULL, &chunks, NULL, 0, NULL, NULL);
  }
  double *most = malloc((chunks ? chunks : 1) * sizeof *most);
  err = err == CL_SUCCESS && !most ? CL_OUT_OF_HOST_MEMORY : err;
  if (err == CL_SUCCESS && chunks) {
    err = clEnqueueReadBuffer(x->q, v->b_max.mem, CL_TRUE, 0, chunks * 8, most, 0, NULL, NULL);
  }
  for (size_t c = 0; c < chunks && err == CL_SUCCESS; ++c) {
    *max_abs = most[c] > *max_abs ? most[c] : *max_abs;
  }
  free(most);
  return err;
}

/* The delays' homogeneity from pass 0's status (as connect.c's delay_homogeneity). */
static uint32_t dv_delay_hom(const dv_draw *x)
{
  if (x->status[NESTCL_CONN_STATUS_DELAYS_DIFFER]) {
    return NESTCL_DELAY_PER_SYNAPSE;
  }
  int ref = x->status[NESTCL_CONN_STATUS_DELAY_REF];
  return ref >= 0 ? (uint32_t)ref : (uint32_t)x->e->clock.min_delay;
}

/* Pass 1 of every projection into the outputs (made here), and the block's (or set's) sizes; *bits as pass 0's. */
static int dv_pass1(dv_draw *x, uint64_t nnz, uint32_t max_row, int *bits)
{
  eng_block *b = x->b;
  eng_plastic *pl = x->o->pl;
  uint32_t delay_hom = dv_delay_hom(x);
  int per_syn = delay_hom == NESTCL_DELAY_PER_SYNAPSE, rc;
  nestcl_buffer *t = pl ? &pl->b_target : &b->b_target, *w = pl ? &pl->b_state : &b->b_weight,
                *dl = pl ? &pl->b_delay : &b->b_delay;
  size_t wbytes = pl ? x->e->desc.projs[pl->proj].lay.state_bytes
                     : (x->e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE ? sizeof(double) : sizeof(float));
  cl_ulong n_fields = 0;
  rc = dv_output(x, t, pl ? "plastic targets" : "CSR targets", nnz * 4);
  if (!rc)
    rc = dv_output(x, w, pl ? "plastic state" : "CSR weights", nnz * wbytes);
  if (!rc)
    rc = dv_output(x, dl, pl ? "plastic delays" : "CSR delays", per_syn ? nnz * 2 : 0);
  if (!rc && pl)
    rc = dv_fields(x, &x->e->desc.projs[pl->proj], &n_fields);
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < x->n && !rc && err == CL_SUCCESS; ++k) {
    x->v[k].w[NESTCL_CW_NNZ] = nnz;
    x->v[k].w[NESTCL_CW_PER_SYNAPSE_DELAY] = (cl_ulong)per_syn;
    x->v[k].w[NESTCL_CW_N_FIELDS] = n_fields;
    err = dv_fill(x, &x->v[k], t, w, dl, &x->max_abs);
  }
  if (!rc && err == CL_SUCCESS)
    err = clEnqueueReadBuffer(x->q, x->b_status.mem, CL_TRUE, 0, sizeof x->status, x->status, 0, NULL, NULL);
  rc = rc ? rc : eng_cl_check(err, "the build's second pass on the device");
  *bits = x->status[NESTCL_CONN_STATUS_BITS];
  if (rc || *bits) {
    dv_output_free(x, t);
    dv_output_free(x, w);
    dv_output_free(x, dl);
    return rc;
  }
  if (pl) {
    pl->nnz = nnz;
    pl->max_row = max_row;
    pl->delay_hom = delay_hom;
  } else {
    b->nnz = nnz;
    b->max_row = max_row;
    b->delay_hom = delay_hom;
  }
  return 0;
}

int eng_conn_device_draw(nestcl_engine *e, eng_vp *vp, eng_block *b, cn_proj *pj, int n_pj, cn_device_out *o,
                         int *drawn)
{
  *drawn = 0;
  if (!e->device.draw_on_device || !vp->ops->stage || n_pj == 0) {
    return 0;
  }
  uint32_t(*ch)[3] = calloc((size_t)n_pj, sizeof *ch);
  if (!ch) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int ok = 1;
  for (int k = 0; k < n_pj && ok; ++k) {
    ok = eligible(e, &pj[k], ch[k]);
  }
  dv_draw x;
  memset(&x, 0, sizeof x);
  x.e = e;
  x.vp = vp;
  x.b = b;
  x.o = o;
  x.n = n_pj;
  x.q = nestcl_device_queue(e->device.dev, vp->queue);
  x.v = ok ? calloc((size_t)n_pj, sizeof *x.v) : NULL;
  int rc = ok && !x.v ? nestcl_set_error(NESTCL_ENOMEM, "out of host memory") : 0, room = ok, bits = 0;
  if (!rc && room)
    rc = dv_setup(&x, pj, (const uint32_t(*)[3])ch, &room);
  if (!rc && room)
    rc = dv_pass0(&x, pj, &bits);
  uint64_t nnz = 0;
  uint32_t max_row = 0;
  if (!rc && room && !bits)
    rc = dv_rows(&x, &nnz, &max_row);
  if (!rc && room && !bits)
    rc = dv_pass1(&x, nnz, max_row, &bits);
  *drawn = !rc && room && !bits;
  for (uint32_t i = 0; *drawn && i < b->n; ++i) {
    o->indegree[i] += x.indegree[i];
    if (o->history) {
      o->nin[i] += x.nin[i];
      o->maxd[i] = x.maxd[i] > o->maxd[i] ? x.maxd[i] : o->maxd[i];
    }
  }
  if (*drawn) {
    o->max_abs = x.max_abs;
  }
  dv_release(&x);
  free(ch);
  return rc;
}
