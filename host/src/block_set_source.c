/*
 * The generated kernels of a block set (block_set.c): one program that
 * updates every mergeable block of the set, whatever its model, and one that
 * delivers the received rows into every block and draws every block's
 * Poisson generators.
 *
 * The merged update, as the engine's device loop merges the populations of
 * one model (engine/resident_update.c), but over several models: each
 * model's translated kernel becomes a function of the program (its source
 * with `__kernel` taken off and the name made the model's case), between the
 * #defines of the constant parameters equal over that model's blocks and
 * #undefs of every macro its text defined, so that models do not see each
 * other's macros (the helpers every translation shares are guarded once).
 * The kernel finds its block by its index in dimension 1, the block's model
 * by the table, and each field at a byte offset into the one state buffer
 * (OpenCL 1.2 cannot keep buffer addresses in device memory). The same
 * launch adds the slice's staged input first, each work-item its neuron's,
 * which the model's update then reads.
 *
 * The merged delivery takes every block's synapse rows and every Poisson
 * generator as arguments (items by the index in dimension 2; as many per
 * launch as the device's CL_DEVICE_MAX_PARAMETER_SIZE allows, as the
 * engine's resident_merge.c does), the sizes as constants of the text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_set_internal.h"
#include "gen_text.h"
#include "hash.h"
#include "core/nestcl_core.h"
#include "engine_kernels_source.h"
#include "nestcl_libm.h"
#include "nestcl_rt_source.h"
#include "specialise.h"

static int set_src_fail(cl_int err, const char *what)
{
  return nestcl_set_error(NESTCL_ECL, "block set: %s failed: %s", what, nestcl_cl_error_name(err));
}

/* ---- the merged update ------------------------------------------------- */

int set_model_index(const nestcl_block_set *s, int j)
{
  if (!s->merged[j]) {
    return -1;
  }
  int k = 0;
  for (int i = 0; i < j; ++i) {
    int first = s->merged[i];
    for (int h = 0; h < i && first; ++h) {
      first = !(s->merged[h] && s->blocks[h]->c.model == s->blocks[i]->c.model);
    }
    if (first && s->blocks[i]->c.model == s->blocks[j]->c.model) {
      return k;
    }
    k += first;
  }
  return k;
}

/* Each `#define NAME` of a model's text undefined again (but the shared helpers' guard). */
static void put_undefs(text *t, const char *src)
{
  for (const char *p = src; (p = strstr(p, "#define ")) != NULL;) {
    const char *line = p;
    while (line > src && (line[-1] == ' ' || line[-1] == '\t')) {
      --line;
    }
    p += 8;
    size_t len = 0;
    while ((p[len] >= 'A' && p[len] <= 'Z') || (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9') ||
           p[len] == '_') {
      ++len;
    }
    if (len && (line == src || line[-1] == '\n') && strncmp(p, "NESTCL_TRANSLATED_HELPERS", len) != 0) {
      put(t, "#undef %.*s\n", (int)len, p);
    }
  }
}

/* "-DNAME=VALUE ..." (nestcl_const_options) as #define lines, or as #undef lines. */
static void put_consts(text *t, const char *opts, int define)
{
  for (const char *p = opts; (p = strstr(p, "-D")) != NULL;) {
    p += 2;
    const char *eq = strchr(p, '='), *end = strchr(p, ' ');
    end = end ? end : p + strlen(p);
    if (!eq || eq > end) {
      break;
    }
    if (define)
      put(t, "#define %.*s %.*s\n", (int)(eq - p), p, (int)(end - eq - 1), eq + 1);
    else
      put(t, "#undef %.*s\n", (int)(eq - p), p);
    p = end;
  }
}

/* Model mi's update as the function nestcl_set_body_<mi>, its constants those equal over its merged blocks. */
static int put_model(text *t, const nestcl_block_set *s, int mi, const nestcl_model *m)
{
  void *const **sets = calloc((size_t)s->n + 1, sizeof *sets);
  uint32_t *ns = calloc((size_t)s->n + 1, sizeof *ns);
  char *opts = malloc(8192);
  if (!sets || !ns || !opts) {
    free(sets);
    free(ns);
    free(opts);
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int k = 0;
  for (int j = 0; j < s->n; ++j) {
    if (set_model_index(s, j) == mi) {
      sets[k] = s->blocks[j]->fields;
      ns[k++] = s->blocks[j]->c.n;
    }
  }
  nestcl_const_options(m, sets, ns, k, opts, 8192);
  char sig[256];
  snprintf(sig, sizeof sig, "__kernel void %s(", m->kernel_name);
  const char *at = strstr(m->kernel_source, sig);
  int rc = at ? 0 : nestcl_set_error(NESTCL_ERUNTIME, "block set: cannot find %s's kernel", m->name);
  if (!rc) {
    put(t, "\n/* ---- %s ---- */\n", m->name);
    put_consts(t, opts, 1);
    put(t, "%.*sstatic void nestcl_set_body_%d(%s\n", (int)(at - m->kernel_source), m->kernel_source, mi,
        at + strlen(sig));
    put_undefs(t, m->kernel_source);
    put_consts(t, opts, 0);
  }
  free(sets);
  free(ns);
  free(opts);
  return rc;
}

/* The kernel: halt check, staging, then the block's model's case. */
static void put_update_kernel(text *t, const nestcl_block_set *s, const nestcl_model *const *models, int n_models,
                              size_t stride)
{
  put(t,
      "\n__kernel void nestcl_set_update(__global const ulong *tab, const long origin_steps, const int from,\n"
      "    const int to, const double resolution_ms, const uint ring_slots, const uint rng_seed,\n"
      "    __global long *ring, __global uint *counts, __global uint2 *spikes, __global double *rec,\n"
      "    __global uchar *state, __global const long *stage, const int staged, __global const ulong *status,\n"
      "    const int halt)\n{\n"
      "  if (halt != 0 && status[%d] != 0ul) {\n    return; /* the device loop halted */\n  }\n"
      "  __global const ulong *t = tab + %zu * get_global_id(1);\n"
      "  const uint n = (uint)t[%d];\n"
      "  if (staged != 0 && get_global_id(0) < n) {\n"
      "    const uint i = (uint)get_global_id(0);\n"
      "    nestcl_ring_stage(ring + t[%d], (uint)t[%d], n, ring_slots, origin_steps, from, to, stage + t[%d], i,\n"
      "                      i + 1u);\n  }\n"
      "  switch ((uint)t[%d]) {\n",
      NESTCL_RES_HALT, stride, SET_TAB_N, SET_TAB_RING, SET_TAB_CHANNELS, SET_TAB_STAGE, SET_TAB_MODEL);
  for (int mi = 0; mi < n_models; ++mi) {
    const nestcl_model *m = models[mi];
    put(t,
        "  case %du:\n    nestcl_set_body_%d(n, (uint)t[%d], origin_steps, from, to, resolution_ms, ring_slots,\n"
        "        (uint)t[%d], ring + t[%d], counts + t[%d], spikes + t[%d], (uint)t[%d], (long)t[%d], rec + t[%d],\n"
        "        rng_seed, t[%d], t[%d]",
        mi, mi, SET_TAB_K, SET_TAB_CHANNELS, SET_TAB_RING, SET_TAB_COUNT, SET_TAB_SPIKES, SET_TAB_CAP,
        SET_TAB_REC_INTERVAL, SET_TAB_REC, SET_TAB_ID_FIRST, SET_TAB_ID_STRIDE);
    for (int f = 0; f < m->n_fields; ++f) {
      put(t, ",\n        (__global %s *)(state + t[%d])", nestcl_cl_type_name(m->fields[f].type), SET_TAB_FIXED + f);
    }
    put(t, ");\n    break;\n");
  }
  (void)s;
  put(t, "  default:\n    break; /* a block with its own launch */\n  }\n}\n");
}

/* The update kernel's arguments that stay for the set's life. */
static cl_int update_fixed_args(nestcl_block_set *s)
{
  cl_kernel k = s->k_update;
  cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &s->b_tab.mem);
  err |= clSetKernelArg(k, 4, sizeof s->resolution_ms, &s->resolution_ms);
  err |= clSetKernelArg(k, 5, sizeof s->ring_slots, &s->ring_slots);
  err |= clSetKernelArg(k, 6, sizeof s->rng_seed, &s->rng_seed);
  err |= clSetKernelArg(k, 7, sizeof(cl_mem), &s->b_ring.mem);
  err |= clSetKernelArg(k, 8, sizeof(cl_mem), &s->b_counts.mem);
  err |= clSetKernelArg(k, 9, sizeof(cl_mem), &s->b_spikes.mem);
  err |= clSetKernelArg(k, 10, sizeof(cl_mem), &s->b_rec.mem);
  err |= clSetKernelArg(k, 11, sizeof(cl_mem), &s->b_state.mem);
  err |= clSetKernelArg(k, 12, sizeof(cl_mem), &s->b_stage.mem);
  return err;
}

int set_update_build(nestcl_block_set *s)
{
  const nestcl_model **models = calloc((size_t)s->n + 1, sizeof *models);
  if (!models) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int n_models = 0, max_fields = 0;
  uint32_t kmax = 1;
  size_t width = 0;
  for (int j = 0; j < s->n; ++j) {
    const nestcl_block *b = s->blocks[j];
    max_fields = b->c.model->n_fields > max_fields ? b->c.model->n_fields : max_fields;
    if (set_model_index(s, j) == n_models) {
      models[n_models++] = b->c.model;
    }
    if (s->merged[j]) {
      kmax = b->c.K > kmax ? b->c.K : kmax;
      width = b->c.n > width ? b->c.n : width;
    }
  }
  const size_t stride = SET_TAB_FIXED + (size_t)max_fields;
  int rc = 0;
  text t = {0};
  put(&t, "%s\n", nestcl_rt_source);
  for (int mi = 0; mi < n_models && !rc; ++mi) {
    rc = put_model(&t, s, mi, models[mi]);
  }
  if (!rc)
    put_update_kernel(&t, s, models, n_models, stride);
  if (!rc && t.oom)
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  char opts[256];
  snprintf(opts, sizeof opts, "-DNESTCL_LIBM_VARIANT=%d -DNESTCL_K_MAX=%u", nestcl_libm_host_variant() != 0, kmax);
  /* A refresh whose blocks' constants did not change keeps the program it has. */
  uint8_t key[32];
  nestcl_sha256 h;
  nestcl_sha256_init(&h);
  nestcl_sha256_update(&h, t.s ? t.s : "", t.s ? strlen(t.s) : 0);
  nestcl_sha256_update(&h, opts, strlen(opts));
  nestcl_sha256_final(&h, key);
  const int same = s->prog_update && memcmp(key, s->update_key, sizeof key) == 0;
  if (!rc && n_models && !same) {
    if (s->k_update)
      clReleaseKernel(s->k_update);
    if (s->prog_update)
      clReleaseProgram(s->prog_update);
    s->k_update = NULL;
    s->prog_update = NULL;
    memcpy(s->update_key, key, sizeof key);
    rc = nestcl_program_build(s->dev, t.s, opts, &s->prog_update);
  }
  free(t.s);
  free(models);
  cl_int err = CL_SUCCESS;
  if (!rc && n_models && !same) {
    s->k_update = clCreateKernel(s->prog_update, "nestcl_set_update", &err);
    rc = err == CL_SUCCESS ? 0 : set_src_fail(err, "clCreateKernel(nestcl_set_update)");
    if (!rc && (err = update_fixed_args(s)) != CL_SUCCESS)
      rc = set_src_fail(err, "clSetKernelArg(nestcl_set_update)");
    /* Work-groups of up to 64 neurons of one block; a block of prime size would otherwise run in groups of one. */
    if (!rc)
      rc = nestcl_kernel_wg_width(s->dev, s->k_update, "nestcl_set_update", 64, &s->upd_group);
    s->upd_width = rc ? 0 : (width + s->upd_group - 1) / s->upd_group * s->upd_group;
  }
  return rc;
}

cl_int set_update_enqueue(nestcl_block_set *s, int64_t origin, int from, int to, int staged, cl_mem status, int halt)
{
  if (!s->k_update || s->upd_width == 0) {
    return CL_SUCCESS;
  }
  cl_long org = origin;
  cl_int f = from, t = to, st = staged, h = halt;
  cl_mem stat = status ? status : s->b_tab.mem; /* read only when halt is set */
  cl_int err = clSetKernelArg(s->k_update, 1, sizeof org, &org);
  err |= clSetKernelArg(s->k_update, 2, sizeof f, &f);
  err |= clSetKernelArg(s->k_update, 3, sizeof t, &t);
  err |= clSetKernelArg(s->k_update, 13, sizeof st, &st);
  err |= clSetKernelArg(s->k_update, 14, sizeof(cl_mem), &stat);
  err |= clSetKernelArg(s->k_update, 15, sizeof h, &h);
  size_t gs[2] = {s->upd_width, (size_t)s->n}, ls[2] = {s->upd_group, 1};
  return err == CL_SUCCESS
    ? nestcl_enq_launch(&s->enq, nestcl_device_queue(s->dev, s->queue), s->k_update, 2, gs, ls, 0, NULL, NULL)
    : err;
}

/* ---- the merged delivery and drive ------------------------------------- */

/* Fixed arguments of a delivery kernel, then per item its buffers (pointers as 8 bytes each). */
enum { DEL_FIXED = 11, DEL_FIXED_BYTES = 88, ROWS_ARGS = 4, POIS_ARGS = 5 };

static int item_args(const nestcl_block_set *s, const set_item *it)
{
  (void)s;
  return it->poisson < 0 ? ROWS_ARGS : POIS_ARGS;
}

/* The work of one item: a block's rows of the list, or a generator's entries for lags [from, to). */
static void put_item(text *t, const nestcl_block_set *s, const set_item *it, int case_no, int a)
{
  const nestcl_block *b = s->blocks[it->b];
  const size_t ring = s->ring_off[it->b];
  if (it->poisson < 0) {
    put(
      t,
      "  case %d:\n    for (ulong s = get_group_id(1); s < n_spikes; s += get_num_groups(1)) {\n"
      "      const uint row = list[2u * s], lag = list[2u * s + 1u];\n"
      "      ulong k0, k1, stride;\n"
      "      nestcl_row_part(a%d[row], a%d[row + 1u], (ulong)get_local_id(0), (ulong)get_local_size(0), &k0, &k1,\n"
      "                      &stride);\n"
      "      nestcl_deliver_range_d(ring + %zuul, %uu, %uu, %uu, a%d, a%d, a%d, %uu, list_origin + (long)lag, k0, k1,\n"
      "                             stride);\n    }\n    break;\n",
      case_no, a, a, ring, b->n_channels, b->c.n, b->c.ring_slots, a + 1, a + 2, a + 3, b->delay_hom);
    return;
  }
  const block_poisson *d = &b->poisson[it->poisson];
  put(t,
      "  case %d:\n    for (uint e = (uint)(get_group_id(1) * get_local_size(0) + get_local_id(0)); e < %uu;\n"
      "         e += (uint)(get_num_groups(1) * get_local_size(0))) {\n"
      "      nestcl_set_poisson(ring + %zuul, %uu, %uu, %uu, origin, from, to, seed, a%d, a%d, a%d, a%d, a%d, %uu,\n"
      "                         %uu, %uu, e);\n    }\n    break;\n",
      case_no, d->n, ring, b->n_channels, b->c.n, b->c.ring_slots, a, a + 1, a + 2, a + 3, a + 4, d->cdf_len, d->kstop,
      d->chunks);
}

/* One kernel for items [first, first + n). */
static void put_deliver_kernel(text *t, const nestcl_block_set *s, int kno, int first, int n)
{
  put(t,
      "\n__kernel void nestcl_set_deliver_%d(__global long *ring, __global const uint *list, const uint n_list,\n"
      "    const long list_origin, __global const ulong *status, const int mode, const long origin, const int from,\n"
      "    const int to, const uint seed, const int halt",
      kno);
  int a = 0;
  for (int i = first; i < first + n; ++i) {
    const set_item *it = &s->items[i];
    if (it->poisson < 0)
      put(t,
          ",\n    __global const ulong *a%d, __global const uint *a%d, __global const double *a%d,\n"
          "    __global const nestcl_u16 *a%d",
          a, a + 1, a + 2, a + 3);
    else
      put(t,
          ",\n    __global const uint *a%d, __global const int *a%d, __global const long *a%d,\n"
          "    __global const ulong *a%d, __global const double *a%d",
          a, a + 1, a + 2, a + 3, a + 4);
    a += item_args(s, it);
  }
  put(t,
      ")\n{\n  if (halt != 0 && status[%d] != 0ul) {\n    return; /* the device loop halted */\n  }\n"
      "  const ulong n_spikes = mode == 0 ? (ulong)n_list\n"
      "                                  : status[%d + (uint)((list_origin / %ul) & 1)];\n"
      "  switch ((int)get_global_id(2)) {\n",
      NESTCL_RES_HALT, NESTCL_RES_GLOBAL_N, s->min_delay);
  a = 0;
  for (int i = first; i < first + n; ++i) {
    put_item(t, s, &s->items[i], i - first, a);
    a += item_args(s, &s->items[i]);
  }
  put(t, "  default:\n    break;\n  }\n}\n");
}

/* A device poisson_generator's entry e (block.c's nestcl_block_poisson, one entry). */
static const char poisson_entry_source[] =
  "NESTCL_INLINE void nestcl_set_poisson(__global long *ring, uint n_channels, uint n, uint ring_slots, long origin,\n"
  "    int from, int to, uint seed, __global const uint *target, __global const int *delay,\n"
  "    __global const long *value, __global const ulong *id, __global const double *cdf, uint cdf_len, uint kstop,\n"
  "    uint chunks, uint e)\n"
  "{\n"
  "  const nestcl_philox_key key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_POISSON);\n"
  "  const uint t = target[e];\n"
  "  for (int lag = from; lag < to; ++lag) {\n"
  "    const long step = origin + lag;\n"
  "    nestcl_rng_stream s = nestcl_stream_init(key, nestcl_rng_counter(id[e], (ulong)step));\n"
  "    uint k = 0u;\n"
  "    for (uint c = 0u; c < chunks; ++c) k += nestcl_poisson_table(nestcl_stream_uniform(&s), cdf, cdf_len, kstop);\n"
  "    if (k != 0u)\n"
  "      nestcl_ring_add_fixed(ring, n_channels, n, nestcl_ring_slot(step, delay[e], ring_slots),\n"
  "                            t >> NESTCL_TARGET_INDEX_BITS, t & NESTCL_TARGET_INDEX_MASK,\n"
  "                            (long)((ulong)k * (ulong)value[e]));\n"
  "  }\n"
  "}\n";

/* The items: every block with synapse rows, every Poisson generator of every block. */
static int list_items(nestcl_block_set *s)
{
  int n = 0;
  for (int j = 0; j < s->n; ++j) {
    n += (s->blocks[j]->nnz ? 1 : 0) + s->blocks[j]->n_poisson;
  }
  s->items = calloc((size_t)n + 1, sizeof *s->items);
  if (!s->items) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int j = 0; j < s->n; ++j) {
    if (s->blocks[j]->nnz)
      s->items[s->n_items++] = (set_item){j, -1};
    for (int k = 0; k < s->blocks[j]->n_poisson; ++k) {
      s->items[s->n_items++] = (set_item){j, k};
    }
  }
  return 0;
}

/* Items per launch, as the device's room for kernel arguments allows (at least one). */
static int plan_launches(nestcl_block_set *s)
{
  size_t room = 1024;
  clGetDeviceInfo(nestcl_device_id(s->dev), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof room, &room, NULL);
  s->launches = calloc((size_t)s->n_items + 1, sizeof *s->launches);
  if (!s->launches) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  for (int i = 0; i < s->n_items;) {
    size_t used = DEL_FIXED_BYTES;
    int n = 0;
    while (i + n < s->n_items && (n == 0 || used + 8u * (size_t)item_args(s, &s->items[i + n]) <= room)) {
      used += 8u * (size_t)item_args(s, &s->items[i + n]);
      ++n;
    }
    s->launches[s->n_launches++] = (set_launch){NULL, i, n};
    i += n;
  }
  return 0;
}

/* A launch's buffer arguments (after the fixed ones). */
static cl_int item_buffers(nestcl_block_set *s, const set_launch *l)
{
  cl_uint a = DEL_FIXED;
  cl_int err = CL_SUCCESS;
  for (int i = l->first; i < l->first + l->n_items; ++i) {
    const nestcl_block *b = s->blocks[s->items[i].b];
    if (s->items[i].poisson < 0) {
      const cl_mem m[ROWS_ARGS] = {b->b_row_ptr.mem, b->b_syn_target.mem, b->b_syn_value.mem, b->b_syn_delay.mem};
      for (int k = 0; k < ROWS_ARGS; ++k)
        err |= clSetKernelArg(l->k, a++, sizeof(cl_mem), &m[k]);
    } else {
      const block_poisson *d = &b->poisson[s->items[i].poisson];
      const cl_mem m[POIS_ARGS] = {d->b_target.mem, d->b_delay.mem, d->b_value.mem, d->b_id.mem, d->b_cdf.mem};
      for (int k = 0; k < POIS_ARGS; ++k)
        err |= clSetKernelArg(l->k, a++, sizeof(cl_mem), &m[k]);
    }
  }
  cl_uint seed = s->rng_seed;
  err |= clSetKernelArg(l->k, 0, sizeof(cl_mem), &s->b_ring.mem);
  err |= clSetKernelArg(l->k, 9, sizeof seed, &seed);
  return err;
}

int set_deliver_build(nestcl_block_set *s)
{
  int rc = list_items(s);
  if (!rc)
    rc = plan_launches(s);
  if (rc || s->n_items == 0) {
    return rc;
  }
  text t = {0};
  put(&t, "%s\n%s\n%s", nestcl_rt_source, nestcl_engine_kernels_source, poisson_entry_source);
  for (int k = 0; k < s->n_launches; ++k) {
    put_deliver_kernel(&t, s, k, s->launches[k].first, s->launches[k].n_items);
  }
  char opts[256];
  snprintf(opts, sizeof opts, "-DNESTCL_W_T=double -DNESTCL_W_SUFFIX=_d%s -DNESTCL_LIBM_VARIANT=%d",
           s->contiguous ? " -DNESTCL_DELIVER_CONTIGUOUS" : "", nestcl_libm_host_variant() != 0);
  rc = t.oom ? nestcl_set_error(NESTCL_ENOMEM, "out of host memory")
             : nestcl_program_build(s->dev, t.s, opts, &s->prog_deliver);
  free(t.s);
  s->width = 1;
  for (int k = 0; k < s->n_launches && !rc; ++k) {
    char name[64];
    snprintf(name, sizeof name, "nestcl_set_deliver_%d", k);
    cl_int err;
    s->launches[k].k = clCreateKernel(s->prog_deliver, name, &err);
    rc = err == CL_SUCCESS ? 0 : set_src_fail(err, "clCreateKernel(nestcl_set_deliver)");
    if (!rc && (err = item_buffers(s, &s->launches[k])) != CL_SUCCESS)
      rc = set_src_fail(err, "clSetKernelArg(nestcl_set_deliver)");
    size_t w = 1;
    /* 256 lanes striding through a row on a GPU (as nestcl_deliver), one walking it on a CPU device. */
    if (!rc)
      rc = nestcl_kernel_wg_width(s->dev, s->launches[k].k, name, s->contiguous ? 1u : 256u, &w);
    s->width = k == 0 || w < s->width ? w : s->width;
  }
  return rc;
}

/*
 * Work-groups in dimension 1 (each walks every g-th spike and every g-th
 * share of a generator's entries): on a GPU enough for the list's spikes
 * (mode 0) or the loop's share, and for every generator's entries, within a
 * bound; on a CPU device a few per core, each work-group there being one
 * work-item (a grid of one per entry costs PoCL more than the draws).
 */
static size_t deliver_groups(const nestcl_block_set *s, int mode, uint32_t n_list)
{
  const nestcl_device_info *di = nestcl_device_get_info(s->dev);
  const size_t cu = di->compute_units ? di->compute_units : 1;
  if (s->contiguous) {
    return 4 * cu;
  }
  size_t g = mode == 0 ? n_list : (s->loop.groups ? s->loop.groups : 4 * cu);
  for (int i = 0; i < s->n_items; ++i) {
    const set_item *it = &s->items[i];
    if (it->poisson >= 0) {
      const size_t need = (s->blocks[it->b]->poisson[it->poisson].n + s->width - 1) / s->width;
      g = need > g ? need : g;
    }
  }
  g = g < 4096 ? g : 4096;
  return g ? g : 1;
}

cl_int set_deliver_enqueue(nestcl_block_set *s, int mode, cl_mem list, uint32_t n_list, int64_t list_origin,
                           int64_t origin, int from, int to, cl_mem status, int halt)
{
  int any_drive = 0;
  for (int i = 0; i < s->n_items; ++i) {
    any_drive = any_drive || s->items[i].poisson >= 0;
  }
  if (s->n_items == 0 || (mode == 0 && n_list == 0 && (!any_drive || from >= to))) {
    return CL_SUCCESS;
  }
  cl_uint nl = n_list;
  cl_long lo = list_origin, org = origin;
  cl_int md = mode, f = from, t = to, h = halt;
  cl_mem lst = list ? list : s->b_tab.mem, stat = status ? status : s->b_tab.mem;
  const size_t groups = deliver_groups(s, mode, n_list);
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < s->n_launches && err == CL_SUCCESS; ++k) {
    cl_kernel kk = s->launches[k].k;
    err = clSetKernelArg(kk, 1, sizeof(cl_mem), &lst);
    err |= clSetKernelArg(kk, 2, sizeof nl, &nl);
    err |= clSetKernelArg(kk, 3, sizeof lo, &lo);
    err |= clSetKernelArg(kk, 4, sizeof(cl_mem), &stat);
    err |= clSetKernelArg(kk, 5, sizeof md, &md);
    err |= clSetKernelArg(kk, 6, sizeof org, &org);
    err |= clSetKernelArg(kk, 7, sizeof f, &f);
    err |= clSetKernelArg(kk, 8, sizeof t, &t);
    err |= clSetKernelArg(kk, 10, sizeof h, &h);
    size_t gs[3] = {s->width, groups * 1, (size_t)s->launches[k].n_items}, ls[3] = {s->width, 1, 1};
    gs[1] = groups;
    if (err == CL_SUCCESS)
      err = nestcl_enq_launch(&s->enq, nestcl_device_queue(s->dev, s->queue), kk, 3, gs, ls, 0, NULL, NULL);
  }
  return err;
}
