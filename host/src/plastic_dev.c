/*
 * Translated (plastic) synapses on a device: layout, program, kernel
 * arguments and the postsynaptic spike history (plastic_dev.h), shared by the
 * engine and nest_patch's blocks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plastic_dev.h"
#include "core_kernel_args.h"
#include "enqueue.h"
#include "gen_text.h"
#include "plastic_kernels_source.h"
#include "nestcl_rt_source.h"
#include "core/nestcl_core.h"

static const size_t hist_elem[ENG_H_ARRAYS] = {8, 8, 8, 4, 4, 4, 8, 8, 8, 4, 8};
static const char *const hist_name[ENG_H_ARRAYS] = {"history t",      "history Kminus", "history Kminus_triplet",
                                                    "history access", "history head",   "history length",
                                                    "Kminus",         "Kminus_triplet", "last spike",
                                                    "STDP in-degree", "STDP max delay"};

static int cl_check(cl_int err, const char *what)
{
  if (err != CL_SUCCESS) {
    return nestcl_set_error(NESTCL_ECL, "%s failed: %s", what, nestcl_cl_error_name(err));
  }
  return 0;
}

/* ---- layout ------------------------------------------------------------- */

size_t eng_syn_field_size(const nestcl_syn_field *f)
{
  return nestcl_field_type_size(f->type);
}

int eng_syn_layout_init(const nestcl_synapse_model *sm, eng_syn_layout *lay)
{
  memset(lay, 0, sizeof *lay);
  lay->weight_f = -1;
  for (int pass = 8; pass >= 4; pass -= 4) {
    for (int f = 0; f < sm->n_syn_fields; ++f) {
      const nestcl_syn_field *sf = &sm->fields[f];
      if (eng_syn_field_size(sf) != (size_t)pass) {
        continue;
      }
      if (sf->role == NESTCL_SYN_STATE) {
        if (lay->n_state == ENG_SYN_FIELDS_MAX) {
          return nestcl_set_error(NESTCL_EINVAL, "%s: too many per-synapse fields", sm->name);
        }
        lay->state_f[lay->n_state] = f;
        lay->state_off[lay->n_state++] = lay->state_bytes;
        lay->state_bytes += (size_t)pass;
      } else if (sf->role == NESTCL_SYN_SOURCE) {
        if (lay->n_src == ENG_SYN_FIELDS_MAX) {
          return nestcl_set_error(NESTCL_EINVAL, "%s: too many per-source fields", sm->name);
        }
        lay->src_f[lay->n_src] = f;
        lay->src_off[lay->n_src++] = lay->src_bytes;
        lay->src_bytes += (size_t)pass;
      }
    }
  }
  for (int k = 0; k < lay->n_state; ++k) {
    const nestcl_syn_field *sf = &sm->fields[lay->state_f[k]];
    if (sf->nest_name && strcmp(sf->nest_name, "weight") == 0 && sf->type == NESTCL_T_DOUBLE) {
      lay->weight_f = lay->state_f[k];
      lay->weight_off = lay->state_off[k];
    }
  }
  if (lay->weight_f < 0) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s: no per-synapse double field named \"weight\" that send() updates; "
                            "the engine delivers such synapses only",
                            sm->name);
  }
  return 0;
}

void eng_syn_load(const nestcl_synapse_model *sm, unsigned char *self, const unsigned char *arrays, int n,
                  const int *fi, const size_t *off, uint64_t count, uint64_t k)
{
  for (int j = 0; j < n; ++j) {
    size_t sz = eng_syn_field_size(&sm->fields[fi[j]]);
    memcpy(self + sm->fields[fi[j]].offset, arrays + off[j] * count + k * sz, sz);
  }
}

void eng_syn_store(const nestcl_synapse_model *sm, const unsigned char *self, unsigned char *arrays, int n,
                   const int *fi, const size_t *off, uint64_t count, uint64_t k)
{
  for (int j = 0; j < n; ++j) {
    size_t sz = eng_syn_field_size(&sm->fields[fi[j]]);
    memcpy(arrays + off[j] * count + k * sz, self + sm->fields[fi[j]].offset, sz);
  }
}

int eng_plastic_route(const nestcl_model *m, uint32_t K, uint32_t n_channels, long rport, int *ch_pos, int *ch_neg,
                      int *ch_zero)
{
  static const double probes[] = {1.0, 2.5, 1e-3, -1.0, -2.5, -1e-3, 0.0};
  for (int k = 0; k < 7; ++k) {
    int ch;
    double v;
    if (m->route_spike(probes[k], rport, K, &ch, &v) != 0 || v != probes[k] || ch < 0 || (uint32_t)ch >= n_channels) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "translated synapses onto %s: its handle(SpikeEvent&) does not add the "
                              "weight unchanged at rport %ld, which the plastic delivery needs",
                              m->name, rport);
    }
    int *slot = probes[k] > 0 ? ch_pos : (probes[k] < 0 ? ch_neg : ch_zero);
    if (k != 0 && k != 3 && k != 6 && *slot != ch) {
      return nestcl_set_error(NESTCL_EINVAL,
                              "translated synapses onto %s: its channel depends on more than the "
                              "weight's sign",
                              m->name);
    }
    *slot = ch;
  }
  return 0;
}

/* ---- program ------------------------------------------------------------ */

static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      return nestcl_set_error(NESTCL_ERUNTIME, "formatting the plastic kernel failed");
    }
    if (*len + (size_t)n < *cap) {
      *len += (size_t)n;
      return 0;
    }
    size_t nc = (*cap + (size_t)n) * 2;
    char *nb = realloc(*buf, nc);
    if (!nb) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    *buf = nb;
    *cap = nc;
  }
}

/* ---- shape ------------------------------------------------------------- */

int eng_plastic_shape_get(const nestcl_device *dev, eng_plastic_shape *out)
{
  out->flat = strcmp(nestcl_device_get_info(dev)->type, "cpu") != 0;
  out->want = ENG_PLASTIC_TILE;
  const char *v = getenv("NESTCL_PLASTIC_SHAPE");
  if (!v || !*v) {
    return 0;
  }
  char *end = NULL;
  long w = 0;
  if (strcmp(v, "source") == 0) {
    out->flat = 0;
  } else if (strcmp(v, "flat") == 0) {
    out->flat = 1;
  } else if (strncmp(v, "flat:", 5) == 0 && (w = strtol(v + 5, &end, 10)) >= 1 && w <= ENG_PLASTIC_TILE && !*end) {
    out->flat = 1;
    out->want = (size_t)w;
  } else {
    return nestcl_set_error(NESTCL_EINVAL,
                            "NESTCL_PLASTIC_SHAPE='%s': not one of source, flat, flat:W (W work-items, 1 to %d)", v,
                            ENG_PLASTIC_TILE);
  }
  return 0;
}

int eng_plastic_width(nestcl_device *dev, cl_kernel k, const eng_plastic_shape *sh, size_t per_source_want,
                      size_t *width)
{
  int rc = nestcl_kernel_wg_width(dev, k, "nestcl_plastic", sh->flat ? sh->want : per_source_want, width);
  if (rc || !sh->flat) {
    return rc;
  }
  /* The flat shape's tile (plastic_kernels.cl) is in local memory, more of it for more per-source fields. */
  const nestcl_device_info *di = nestcl_device_get_info(dev);
  cl_ulong local = 0;
  cl_int err = clGetKernelWorkGroupInfo(k, di->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
  if (err != CL_SUCCESS) {
    return cl_check(err, "CL_KERNEL_LOCAL_MEM_SIZE of nestcl_plastic");
  }
  if (di->local_mem_bytes && local > di->local_mem_bytes) {
    return nestcl_set_error(NESTCL_ENOMEM,
                            "device '%s': the flat plastic delivery needs %llu bytes of local memory, the device has "
                            "%llu (NESTCL_PLASTIC_SHAPE=source delivers one source per work-group instead)",
                            di->device_name, (unsigned long long)local, (unsigned long long)di->local_mem_bytes);
  }
  return 0;
}

size_t eng_plastic_flat_groups(const nestcl_device *dev, size_t width, uint64_t sources, uint32_t longest)
{
  const nestcl_device_info *di = nestcl_device_get_info(dev);
  const uint64_t cu = di->compute_units ? di->compute_units : 1;
  const uint64_t fill = cu * (2048 / width ? 2048 / width : 1);
  const uint64_t chunks = sources * ((longest + width - 1) / width);
  const uint64_t g = chunks < fill ? chunks : fill;
  return g ? (size_t)g : 1;
}

int eng_plastic_row_done_alloc(nestcl_device *dev, uint32_t n_rows, nestcl_buffer *out)
{
  size_t bytes = ((size_t)n_rows + 1) * 4;
  void *zeros = calloc(bytes, 1);
  if (!zeros) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "plastic row counters", bytes,
                               CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, zeros, out);
  free(zeros);
  return rc;
}

/* nestcl_rt_source, the prelude naming the model, its <model>_syn.cl, plastic_kernels.cl. */
int eng_plastic_program(nestcl_device *dev, const nestcl_synapse_model *sm, const eng_syn_layout *lay, int contiguous,
                        const eng_plastic_shape *sh, cl_program *out)
{
  size_t len = 0,
         cap = strlen(nestcl_rt_source) + strlen(sm->device_source) + strlen(nestcl_plastic_kernels_source) + 4096;
  char *s = malloc(cap);
  if (!s) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  s[0] = 0;
  const char *options = sh->flat ? "-DNESTCL_PLASTIC_FLAT=1" : (contiguous ? "-DNESTCL_DELIVER_CONTIGUOUS=1" : "");
  int rc = append(&s, &len, &cap,
                  "%s\n#define NESTCL_SYN_T nestcl_syn_%s\n#define NESTCL_SYNCP_T nestcl_syncp_%s\n"
                  "#define NESTCL_SYN_SEND %s\n#define NESTCL_SYN_STATE(X)",
                  nestcl_rt_source, sm->name, sm->name, sm->send_name);
  for (int k = 0; k < lay->n_state && !rc; ++k) {
    const nestcl_syn_field *f = &sm->fields[lay->state_f[k]];
    rc = append(&s, &len, &cap, " X(%s, %s, %zu)", f->member, nestcl_cl_type_name(f->type), lay->state_off[k]);
  }
  if (!rc)
    rc = append(&s, &len, &cap, "\n#define NESTCL_SYN_SOURCE(X)");
  for (int k = 0; k < lay->n_src && !rc; ++k) {
    const nestcl_syn_field *f = &sm->fields[lay->src_f[k]];
    rc = append(&s, &len, &cap, " X(%s, %s, %zu)", f->member, nestcl_cl_type_name(f->type), lay->src_off[k]);
  }
  if (!rc)
    rc = append(&s, &len, &cap, "\n%s\n%s", sm->device_source, nestcl_plastic_kernels_source);
  if (!rc)
    rc = nestcl_program_build(dev, s, options, out);
  free(s);
  return rc;
}

_Static_assert(PK_STATUS == PK_HIST + ENG_H_ARRAYS + 1, "nestcl_plastic's arguments after the history");

cl_int eng_plastic_fixed_args(cl_kernel k, const eng_plastic_fixed *a)
{
  cl_uint dh = a->delay_hom, slots = a->ring_slots, n = a->n, nch = a->n_channels;
  cl_uint cpos = a->ch_pos, cneg = a->ch_neg, czero = a->ch_zero;
  cl_long rport = a->rport, tps = a->tics_per_step;
  cl_double mpt = 1e-3, mps = a->ms_per_step, eps = ENG_STDP_EPS, tmi = a->tau_minus_inv;
  cl_int fused = a->fused;
  cl_int err = clSetKernelArg(k, PK_LAGS, sizeof(cl_mem), &a->lags->mem);
  err |= clSetKernelArg(k, PK_DELAY_HOM, sizeof dh, &dh);
  err |= clSetKernelArg(k, PK_TMPL, sizeof(cl_mem), &a->tmpl->mem);
  err |= clSetKernelArg(k, PK_CP, sizeof(cl_mem), &a->cp->mem);
  err |= clSetKernelArg(k, PK_RING, sizeof(cl_mem), &a->ring->mem);
  err |= clSetKernelArg(k, PK_RING_SLOTS, sizeof slots, &slots);
  err |= clSetKernelArg(k, PK_N, sizeof n, &n);
  err |= clSetKernelArg(k, PK_N_CHANNELS, sizeof nch, &nch);
  err |= clSetKernelArg(k, PK_CH_POS, sizeof cpos, &cpos);
  err |= clSetKernelArg(k, PK_CH_NEG, sizeof cneg, &cneg);
  err |= clSetKernelArg(k, PK_CH_ZERO, sizeof czero, &czero);
  err |= clSetKernelArg(k, PK_RPORT, sizeof rport, &rport);
  err |= clSetKernelArg(k, PK_TICS_PER_STEP, sizeof tps, &tps);
  err |= clSetKernelArg(k, PK_MS_PER_TIC, sizeof mpt, &mpt);
  err |= clSetKernelArg(k, PK_MS_PER_STEP, sizeof mps, &mps);
  err |= clSetKernelArg(k, PK_EPS, sizeof eps, &eps);
  err |= clSetKernelArg(k, PK_TAU_MINUS_INV, sizeof tmi, &tmi);
  err |= clSetKernelArg(k, PK_FUSED, sizeof fused, &fused);
  /* The host's list (loop 0): the status and bucket arguments are not read, any buffer does. */
  cl_uint zero = 0, one = 1;
  cl_int list = 0;
  err |= clSetKernelArg(k, PK_STATUS, sizeof(cl_mem), &a->tmpl->mem);
  err |= clSetKernelArg(k, PK_BUCKET_WORD, sizeof(cl_mem), &a->tmpl->mem);
  err |= clSetKernelArg(k, PK_BUCKET_WIDTH, sizeof zero, &zero);
  err |= clSetKernelArg(k, PK_MIN_DELAY, sizeof one, &one);
  return err | clSetKernelArg(k, PK_LOOP, sizeof list, &list);
}

cl_int eng_plastic_rows_args(cl_kernel k, const nestcl_buffer *srcs, cl_ulong src_first, cl_uint n_rows,
                             const nestcl_buffer *row, const nestcl_buffer *target, const nestcl_buffer *delay,
                             const nestcl_buffer *state, cl_ulong nnz, const nestcl_buffer *src_state,
                             const nestcl_buffer *row_done)
{
  cl_int err = clSetKernelArg(k, PK_SRCS, sizeof(cl_mem), &srcs->mem);
  err |= clSetKernelArg(k, PK_SRC_FIRST, sizeof src_first, &src_first);
  err |= clSetKernelArg(k, PK_N_ROWS, sizeof n_rows, &n_rows);
  err |= clSetKernelArg(k, PK_ROW, sizeof(cl_mem), &row->mem);
  err |= clSetKernelArg(k, PK_TARGET, sizeof(cl_mem), &target->mem);
  err |= clSetKernelArg(k, PK_DELAY, sizeof(cl_mem), &delay->mem);
  err |= clSetKernelArg(k, PK_STATE, sizeof(cl_mem), &state->mem);
  err |= clSetKernelArg(k, PK_NNZ, sizeof nnz, &nnz);
  err |= clSetKernelArg(k, PK_ROW_DONE, sizeof(cl_mem), &row_done->mem);
  return err | clSetKernelArg(k, PK_SRC_STATE, sizeof(cl_mem), &src_state->mem);
}

/* ---- history ------------------------------------------------------------ */

nestcl_history eng_hist_view(eng_history *h)
{
  nestcl_history v = {h->a[ENG_H_T],      h->a[ENG_H_KMINUS], h->a[ENG_H_KMINUS_TRIPLET],
                      h->a[ENG_H_ACCESS], h->a[ENG_H_HEAD],   h->a[ENG_H_LEN],
                      h->a[ENG_H_KM],     h->a[ENG_H_KMT],    h->a[ENG_H_LAST],
                      h->a[ENG_H_NIN],    h->a[ENG_H_MAXD],   h->cap};
  return v;
}

static size_t hist_count(uint32_t n, int a, uint32_t cap)
{
  return a <= ENG_H_ACCESS ? (size_t)n * cap : (size_t)n;
}

size_t eng_hist_bytes(const eng_history *h)
{
  size_t s = 0;
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    s += hist_count(h->n, a, h->cap) * hist_elem[a];
  }
  return s;
}

int eng_hist_init(eng_history *h, uint32_t n, uint32_t cap, uint32_t max_cap, double tau_minus,
                  double tau_minus_triplet, const uint32_t *nin, const double *maxd, size_t max_pairs,
                  int64_t tics_per_step, double min_delay_ms, int fused, uint64_t first_gid, const char *model)
{
  memset(h, 0, sizeof *h);
  h->n = n;
  h->cap = cap;
  h->max_cap = max_cap;
  h->tau_minus_inv = 1.0 / tau_minus;
  h->tau_minus_triplet_inv = 1.0 / tau_minus_triplet;
  h->tics_per_step = tics_per_step;
  h->min_delay_ms = min_delay_ms;
  h->fused = fused;
  h->first_gid = first_gid;
  h->model = model;
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    size_t bytes = hist_count(n, a, cap) * hist_elem[a];
    h->a[a] = calloc(bytes ? bytes : 1, 1);
    if (!h->a[a]) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike history");
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    ((double *)h->a[ENG_H_LAST])[i] = -1.0;
    ((uint32_t *)h->a[ENG_H_NIN])[i] = nin ? nin[i] : 0;
    ((double *)h->a[ENG_H_MAXD])[i] = maxd ? maxd[i] : 0.0;
  }
  h->max_pairs = max_pairs ? max_pairs : 1;
  h->append = malloc(2 * h->max_pairs * sizeof *h->append);
  if (!h->append) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike history");
  }
  return 0;
}

/* Re-lays the host arrays out for new_cap entries per neuron. */
static int hist_relayout(eng_history *h, uint32_t new_cap)
{
  void *na[ENG_H_ACCESS + 1];
  for (int a = 0; a <= ENG_H_ACCESS; ++a) {
    na[a] = calloc(hist_count(h->n, a, new_cap) * hist_elem[a] + 1, 1);
    if (!na[a]) {
      for (int c = 0; c < a; ++c) {
        free(na[c]);
      }
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike history");
    }
  }
  nestcl_history v = eng_hist_view(h);
  for (uint32_t i = 0; i < h->n; ++i) {
    for (uint32_t k = 0; k < v.len[i]; ++k) {
      size_t from = nestcl_hist_slot(&v, i, k), to = (size_t)i * new_cap + k;
      for (int a = 0; a <= ENG_H_ACCESS; ++a) {
        memcpy((char *)na[a] + to * hist_elem[a], (char *)h->a[a] + from * hist_elem[a], hist_elem[a]);
      }
    }
    v.head[i] = 0;
  }
  for (int a = 0; a <= ENG_H_ACCESS; ++a) {
    free(h->a[a]);
    h->a[a] = na[a];
  }
  h->cap = new_cap;
  return 0;
}

int eng_hist_reserve(eng_history *h, uint32_t cap)
{
  return cap > h->cap ? hist_relayout(h, cap) : 0;
}

static int hist_too_small(const eng_history *h, uint32_t i)
{
  return nestcl_set_error(NESTCL_ERUNTIME,
                          "postsynaptic spike history of neuron %llu (%s) needs more than %u entries (history_max; "
                          "NEST keeps every spike that an STDP synapse onto it has not read yet): raise "
                          "--history-max",
                          (unsigned long long)(h->first_gid + i), h->model, h->max_cap);
}

static int cmp_pair(const void *x, const void *y)
{
  const uint32_t *a = x, *b = y;
  if (a[0] != b[0]) {
    return a[0] < b[0] ? -1 : 1;
  }
  return a[1] < b[1] ? -1 : (a[1] > b[1]);
}

void eng_hist_sort(eng_history *h)
{
  qsort(h->append, h->n_append, 2 * sizeof(uint32_t), cmp_pair);
}

int eng_hist_append_host(eng_history *h, int64_t origin)
{
  for (;;) {
    nestcl_history v = eng_hist_view(h);
    int full = 0;
    uint32_t bad = 0;
    for (size_t q = 0; q < h->n_append && !full;) {
      uint32_t i = h->append[2 * q];
      size_t q1 = q + 1;
      while (q1 < h->n_append && h->append[2 * q1] == i) {
        ++q1;
      }
      if (nestcl_hist_append_neuron(&v, i, h->append + 1, 2, (uint32_t)q, (uint32_t)q1, origin, h->tics_per_step, 1e-3,
                                    h->tau_minus_inv, h->tau_minus_triplet_inv, h->min_delay_ms, ENG_STDP_EPS,
                                    h->fused)) {
        full = 1;
        bad = i;
      }
      q = q1;
    }
    if (!full) {
      return 0;
    }
    if (h->cap >= h->max_cap) {
      return hist_too_small(h, bad);
    }
    int rc = hist_relayout(h, h->cap * 2 > h->max_cap ? h->max_cap : h->cap * 2);
    if (rc) {
      return rc;
    }
  }
}

cl_int eng_hist_args(cl_kernel k, cl_uint first, const eng_history *h)
{
  cl_int err = CL_SUCCESS;
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    err |= clSetKernelArg(k, first + (cl_uint)a, sizeof(cl_mem), &h->b[a].mem);
  }
  cl_uint cap = h->cap;
  return err | clSetKernelArg(k, first + ENG_H_ARRAYS, sizeof cap, &cap);
}

/* The host arrays to the device (buffers of the current cap); the host arrays are freed. */
static int hist_to_device(eng_history *h, nestcl_device *dev)
{
  int rc = 0;
  for (int a = 0; a < ENG_H_ARRAYS && !rc; ++a) {
    size_t bytes = hist_count(h->n, a, h->cap) * hist_elem[a];
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_STATE, hist_name[a], bytes,
                             CL_MEM_READ_WRITE | (bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes ? h->a[a] : NULL, &h->b[a]);
  }
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    free(h->a[a]);
    h->a[a] = NULL;
  }
  return rc;
}

int eng_hist_upload(eng_history *h, nestcl_device *dev, cl_program core)
{
  int rc = hist_to_device(h, dev);
  cl_int err = CL_SUCCESS;
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "history flag", 8, CL_MEM_READ_WRITE, NULL, &h->b_flag);
  if (!rc)
    rc = nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "history spikes", h->max_pairs * 8, CL_MEM_READ_ONLY, NULL,
                             &h->b_append);
  if (rc) {
    return rc;
  }
  h->k_append = clCreateKernel(core, "nestcl_hist_append", &err);
  if ((rc = cl_check(err, "clCreateKernel(nestcl_hist_append)")))
    return rc;
  cl_long tps = h->tics_per_step;
  cl_double mpt = 1e-3, tmi = h->tau_minus_inv, tti = h->tau_minus_triplet_inv, mdm = h->min_delay_ms;
  cl_double eps = ENG_STDP_EPS;
  cl_int fused = h->fused;
  err = clSetKernelArg(h->k_append, HIST_APPEND_TICS_PER_STEP, sizeof tps, &tps);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_MS_PER_TIC, sizeof mpt, &mpt);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_TAU_MINUS_INV, sizeof tmi, &tmi);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_TAU_MINUS_TRIPLET_INV, sizeof tti, &tti);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_MIN_DELAY_MS, sizeof mdm, &mdm);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_EPS, sizeof eps, &eps);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_FUSED, sizeof fused, &fused);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_FLAG, sizeof(cl_mem), &h->b_flag.mem);
  err |= eng_hist_args(h->k_append, HIST_APPEND_HISTORY, h);
  return cl_check(err, "clSetKernelArg(nestcl_hist_append)");
}

int eng_hist_download(eng_history *h, nestcl_device *dev, int queue)
{
  cl_command_queue q = nestcl_device_queue(dev, queue);
  int rc = 0;
  for (int a = 0; a < ENG_H_ARRAYS && !rc; ++a) {
    size_t bytes = hist_count(h->n, a, h->cap) * hist_elem[a];
    free(h->a[a]);
    h->a[a] = malloc(bytes + 1);
    if (!h->a[a]) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory for the spike history");
    } else if (bytes) {
      rc = cl_check(clEnqueueReadBuffer(q, h->b[a].mem, CL_TRUE, 0, bytes, h->a[a], 0, NULL, NULL),
                    "reading the spike history");
    }
  }
  return rc;
}

int eng_hist_add_user(eng_history *h, cl_kernel k)
{
  if (h->n_users == h->cap_users) {
    int cap = h->cap_users ? 2 * h->cap_users : 8;
    cl_kernel *u = realloc(h->users, (size_t)cap * sizeof *u);
    if (!u) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    h->users = u;
    h->cap_users = cap;
  }
  h->users[h->n_users++] = k;
  return 0;
}

/* The device copy moved: the append kernel and every user read the new buffers and capacity. */
static int hist_repoint(eng_history *h)
{
  cl_int err = eng_hist_args(h->k_append, HIST_APPEND_HISTORY, h);
  for (int j = 0; j < h->n_users; ++j) {
    err |= eng_hist_args(h->users[j], PK_HIST, h);
  }
  return cl_check(err, "clSetKernelArg(history)");
}

int eng_hist_replace_device(eng_history *h, nestcl_device *dev)
{
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    nestcl_buffer_free(dev, &h->b[a]);
  }
  int rc = hist_to_device(h, dev);
  return rc ? rc : hist_repoint(h);
}

/* Grows the device copy: read back, re-lay out, upload, re-point the kernels. */
static int hist_grow_device(eng_history *h, nestcl_device *dev, int queue, uint32_t new_cap)
{
  int rc = eng_hist_download(h, dev, queue);
  if (!rc)
    rc = hist_relayout(h, new_cap);
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    nestcl_buffer_free(dev, &h->b[a]);
  }
  if (!rc)
    rc = hist_to_device(h, dev);
  if (!rc)
    rc = hist_repoint(h);
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    free(h->a[a]);
    h->a[a] = NULL;
  }
  return rc;
}

int eng_hist_grow(eng_history *h, nestcl_device *dev, int queue, uint32_t full)
{
  if (h->cap >= h->max_cap) {
    return hist_too_small(h, full);
  }
  return hist_grow_device(h, dev, queue, h->cap * 2 > h->max_cap ? h->max_cap : h->cap * 2);
}

cl_int eng_hist_append_enqueue(eng_history *h, nestcl_device *dev, int queue, int64_t origin)
{
  if (h->n_append == 0) {
    return CL_SUCCESS;
  }
  if (h->n_append > h->max_pairs) {
    return CL_INVALID_VALUE;
  }
  cl_command_queue q = nestcl_device_queue(dev, queue);
  static const cl_uint flag[2] = {0u, 0xffffffffu};
  cl_uint np = (cl_uint)h->n_append;
  cl_long org = origin;
  size_t gsize = h->n_append;
  cl_int err = nestcl_enq_write(h->counts, q, h->b_append.mem, CL_FALSE, 0, h->n_append * 8, h->append, 0, NULL, NULL);
  err |= nestcl_enq_write(h->counts, q, h->b_flag.mem, CL_FALSE, 0, sizeof flag, flag, 0, NULL, NULL);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_PAIRS, sizeof(cl_mem), &h->b_append.mem);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_N_PAIRS, sizeof np, &np);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_ORIGIN, sizeof org, &org);
  if (err == CL_SUCCESS)
    err = nestcl_enq_launch(h->counts, q, h->k_append, 1, &gsize, NULL, 0, NULL, NULL);
  return err;
}

int eng_hist_append_device(eng_history *h, nestcl_device *dev, int queue, int64_t origin)
{
  if (h->n_append == 0) {
    return 0;
  }
  cl_command_queue q = nestcl_device_queue(dev, queue);
  if (h->n_append > h->max_pairs) {
    return nestcl_set_error(NESTCL_ERUNTIME, "history: %zu spikes to append, room for %zu", h->n_append, h->max_pairs);
  }
  cl_int err = nestcl_enq_write(h->counts, q, h->b_append.mem, CL_FALSE, 0, h->n_append * 8, h->append, 0, NULL, NULL);
  cl_uint np = (cl_uint)h->n_append;
  cl_long org = origin;
  err |= clSetKernelArg(h->k_append, HIST_APPEND_PAIRS, sizeof(cl_mem), &h->b_append.mem);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_N_PAIRS, sizeof np, &np);
  err |= clSetKernelArg(h->k_append, HIST_APPEND_ORIGIN, sizeof org, &org);
  if (err != CL_SUCCESS) {
    return cl_check(err, "history append");
  }
  for (;;) {
    cl_uint flag[2] = {0u, 0xffffffffu};
    size_t gsize = h->n_append;
    err = nestcl_enq_write(h->counts, q, h->b_flag.mem, CL_FALSE, 0, sizeof flag, flag, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = nestcl_enq_launch(h->counts, q, h->k_append, 1, &gsize, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = nestcl_enq_read(h->counts, q, h->b_flag.mem, CL_TRUE, 0, sizeof flag, flag, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      return cl_check(err, "history append kernel");
    }
    if (flag[0] == 0) {
      return 0;
    }
    int rc = eng_hist_grow(h, dev, queue, flag[1]);
    if (rc) {
      return rc;
    }
  }
}

void eng_hist_free(eng_history *h, nestcl_device *dev)
{
  for (int a = 0; a < ENG_H_ARRAYS; ++a) {
    free(h->a[a]);
    if (dev) {
      nestcl_buffer_free(dev, &h->b[a]);
    }
  }
  if (dev) {
    nestcl_buffer_free(dev, &h->b_append);
    nestcl_buffer_free(dev, &h->b_flag);
  }
  if (h->k_append)
    clReleaseKernel(h->k_append);
  free(h->append);
  free(h->users);
  memset(h, 0, sizeof *h);
}
