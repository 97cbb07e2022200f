/*
 * The postsynaptic spike history (kernels_templates/nestcl_history.h) against a
 * plain reference of NEST's ArchivingNode written here from its semantics (a
 * deque as an array; prune, traces, get_history, get_K_value, register):
 * 64 neurons, each with 1-12 STDP synapses of delays 0.1-5 ms and random pre and
 * post spike trains (bursts, simultaneous pre and post spikes, spikes exactly a
 * delay apart), processed as NEST's synapses would (get_history from the last
 * pre spike to this one, shifted by the dendritic delay, then get_K_value).
 * Every window (entries' t and Kminus) and every K value must be equal bit for
 * bit, with a ring of exactly the largest length the reference reached; with
 * one entry less, set_spiketime must report the overflow. Then the same
 * histories on the OpenCL device (one work-item per neuron, the same events)
 * against the C path, bit for bit. Exit 77 is not used: without a device the
 * C part still runs and the device part says it was skipped.
 */
#define NESTCL_CHECK_FATAL
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_history.h"
#include "nestcl_philox.h"
#include "nestcl_rt_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history_scenario.h"

/* ---- the reference: NEST's ArchivingNode on an array ---- */
typedef struct ref_entry {
  double t, kminus, kminus_triplet;
  unsigned access;
} ref_entry;

typedef struct ref {
  ref_entry *d;
  unsigned len, max_len, n_incoming;
  double Kminus, Kminus_triplet, last_spike, max_delay;
} ref;

static void ref_register(ref *r, double t_first_read, double delay)
{
  for (unsigned k = 0; k < r->len && t_first_read - r->d[k].t > -1.0 * EPS; ++k)
    r->d[k].access++;
  r->n_incoming++;
  r->max_delay = fmax(delay, r->max_delay);
}

static void ref_set_spiketime(ref *r, double t, int fused)
{
  if (!r->n_incoming) {
    r->last_spike = t;
    return;
  }
  while (r->len > 1 && r->d[0].access >= r->n_incoming && t - r->d[1].t > r->max_delay + MIN_DELAY + EPS) {
    memmove(r->d, r->d + 1, (r->len - 1) * sizeof *r->d);
    r->len--;
  }
  r->Kminus = r->Kminus * nestcl_libm_exp((r->last_spike - t) * TAU_MINUS_INV, fused) + 1.0;
  r->Kminus_triplet = r->Kminus_triplet * nestcl_libm_exp((r->last_spike - t) * TAU_TRIPLET_INV, fused) + 1.0;
  r->last_spike = t;
  r->d[r->len++] = (ref_entry){t, r->Kminus, r->Kminus_triplet, 0};
  if (r->len > r->max_len)
    r->max_len = r->len;
}

/* get_history( t1, t2 ): [*start, *finish), counting reads. */
static void ref_get_history(ref *r, double t1, double t2, unsigned *start, unsigned *finish)
{
  unsigned k = r->len;
  while (k > 0 && r->d[k - 1].t >= t2 + EPS)
    --k;
  *finish = k;
  while (k > 0 && r->d[k - 1].t >= t1 + EPS)
    r->d[--k].access++;
  *start = k;
}

static double ref_get_K_value(const ref *r, double t, int fused)
{
  for (unsigned k = r->len; k > 0; --k)
    if (t - r->d[k - 1].t > EPS)
      return r->d[k - 1].kminus * nestcl_libm_exp((r->d[k - 1].t - t) * TAU_MINUS_INV, fused);
  return 0.0;
}

/* The history arrays of `neurons` neurons with capacity cap (host memory, zeroed; last_spike -1). */
typedef struct hist_mem {
  double *t, *km, *kmt, *Kminus, *Kminus_triplet, *last, *maxd;
  nestcl_u32 *access, *head, *len, *n_inc;
} hist_mem;

static nestcl_history hist_alloc(hist_mem *m, unsigned neurons, unsigned cap)
{
  m->t = calloc((size_t)neurons * cap, 8);
  m->km = calloc((size_t)neurons * cap, 8);
  m->kmt = calloc((size_t)neurons * cap, 8);
  m->access = calloc((size_t)neurons * cap, 4);
  m->head = calloc(neurons, 4);
  m->len = calloc(neurons, 4);
  m->n_inc = calloc(neurons, 4);
  m->Kminus = calloc(neurons, 8);
  m->Kminus_triplet = calloc(neurons, 8);
  m->last = calloc(neurons, 8);
  m->maxd = calloc(neurons, 8);
  CHECK(m->t && m->km && m->kmt && m->access && m->head && m->len && m->n_inc && m->Kminus && m->Kminus_triplet &&
          m->last && m->maxd,
        "out of memory");
  for (unsigned i = 0; i < neurons; ++i)
    m->last[i] = -1.0;
  nestcl_history h = {m->t,    m->km,    m->kmt,  m->access, m->head, m->len, m->Kminus, m->Kminus_triplet,
                      m->last, m->n_inc, m->maxd, cap};
  return h;
}

static void hist_free(hist_mem *m)
{
  free(m->t);
  free(m->km);
  free(m->kmt);
  free(m->access);
  free(m->head);
  free(m->len);
  free(m->n_inc);
  free(m->Kminus);
  free(m->Kminus_triplet);
  free(m->last);
  free(m->maxd);
}

/*
 * Runs neuron i's scenario on history h (slot i); out[3e..3e+2] get, per pre
 * spike event e, the window's start, finish and the K value (as bits), and
 * the sum of the window's t and Kminus in out of a post spike event; returns
 * 1 on an overflow. The same code runs in the OpenCL kernel below.
 */
#define NESTCL_HIST_SCENARIO_BODY                                                                                      \
  double t_last[MAXSYN];                                                                                               \
  for (int j = 0; j < sc->n_syn; ++j) {                                                                                \
    t_last[j] = 0.0;                                                                                                   \
    nestcl_hist_register(h, i, t_last[j] - sc->delay[j], sc->delay[j], EPS);                                           \
  }                                                                                                                    \
  for (unsigned e = 0; e < EVENTS; ++e) {                                                                              \
    const double te = sc->e[e].t;                                                                                      \
    const int j = sc->e[e].syn;                                                                                        \
    if (j < 0) {                                                                                                       \
      if (nestcl_hist_set_spiketime(h, i, te, TAU_MINUS_INV, TAU_TRIPLET_INV, MIN_DELAY, EPS, fused)) {                \
        return 1;                                                                                                      \
      }                                                                                                                \
      out[3 * e] = out[3 * e + 1] = out[3 * e + 2] = 0.0;                                                              \
      continue;                                                                                                        \
    }                                                                                                                  \
    nestcl_u32 a, b;                                                                                                   \
    nestcl_hist_get_history(h, i, t_last[j] - sc->delay[j], te - sc->delay[j], EPS, &a, &b);                           \
    double sum = 0.0;                                                                                                  \
    for (nestcl_u32 k = a; k < b; ++k)                                                                                 \
      sum += nestcl_hist_t(h, i, k) * 3.0 + nestcl_hist_kminus(h, i, k);                                               \
    out[3 * e] = (double)a + 1e6 * (double)b;                                                                          \
    out[3 * e + 1] = sum;                                                                                              \
    out[3 * e + 2] = nestcl_hist_get_K_value(h, i, te - sc->delay[j], TAU_MINUS_INV, EPS, fused);                      \
    t_last[j] = te;                                                                                                    \
  }                                                                                                                    \
  return 0;

static int run_c(const nestcl_history *h, nestcl_u32 i, const scenario *sc, double *out, int fused)
{
  NESTCL_HIST_SCENARIO_BODY
}

/* The reference on the same scenario: the same outputs (window as logical positions of its own deque). */
static unsigned run_ref(const scenario *sc, double *out, int fused)
{
  ref r = {calloc(EVENTS + 1, sizeof(ref_entry)), 0, 0, 0, 0.0, 0.0, -1.0, 0.0};
  CHECK(r.d, "out of memory");
  double t_last[MAXSYN];
  for (int j = 0; j < sc->n_syn; ++j) {
    t_last[j] = 0.0;
    ref_register(&r, t_last[j] - sc->delay[j], sc->delay[j]);
  }
  for (unsigned e = 0; e < EVENTS; ++e) {
    const double te = sc->e[e].t;
    const int j = sc->e[e].syn;
    if (j < 0) {
      ref_set_spiketime(&r, te, fused);
      out[3 * e] = out[3 * e + 1] = out[3 * e + 2] = 0.0;
      continue;
    }
    unsigned a, b;
    ref_get_history(&r, t_last[j] - sc->delay[j], te - sc->delay[j], &a, &b);
    double sum = 0.0;
    for (unsigned k = a; k < b; ++k)
      sum += r.d[k].t * 3.0 + r.d[k].kminus;
    out[3 * e] = (double)a + 1e6 * (double)b;
    out[3 * e + 1] = sum;
    out[3 * e + 2] = ref_get_K_value(&r, te - sc->delay[j], fused);
    t_last[j] = te;
  }
  free(r.d);
  return r.max_len;
}

#define XSTR2(...) #__VA_ARGS__
#define XSTR(...) XSTR2(__VA_ARGS__)

/* The same scenario runner on the device: one work-item per neuron. */
static int compare_opencl(const scenario *scs, unsigned cap, int fused, const double *c_out, const hist_mem *cm)
{
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("no OpenCL device (%s): the device comparison is skipped\n", nestcl_last_error());
    return 0;
  }
  char head[1024];
  snprintf(head, sizeof head,
           "typedef struct ev { double t; int syn, pad; } ev;\n"
           "typedef struct scenario { int n_syn, pad; double delay[%u]; ev e[%u]; } scenario;\n"
           "static int run(const nestcl_history *h, uint i, __global const scenario *sc, __global double *out, "
           "int fused) {\n",
           MAXSYN, EVENTS);
  const char *body = XSTR(NESTCL_HIST_SCENARIO_BODY);
  const char *tail =
    "\n}\n"
    "__kernel void t_hist(__global double *t, __global double *km, __global double *kmt, __global uint *access,\n"
    "  __global uint *head, __global uint *len, __global double *Km, __global double *Kmt, __global double *last,\n"
    "  __global uint *n_inc, __global double *maxd, uint cap, __global const scenario *scs, __global double *outs,\n"
    "  __global int *rc, int fused) {\n"
    "  uint i = (uint)get_global_id(0);\n"
    "  nestcl_history h = {t, km, kmt, access, head, len, Km, Kmt, last, n_inc, maxd, cap};\n"
    "  rc[i] = run(&h, i, scs + i, outs + (size_t)i * 3 * " XSTR(EVENTS) ", fused);\n"
                                                                         "}\n";
  size_t len = strlen(nestcl_rt_source) + strlen(head) + strlen(body) + strlen(tail) + 4;
  char *src = malloc(len);
  CHECK(src != NULL, "out of memory");
  snprintf(src, len, "%s\n%s%s%s", nestcl_rt_source, head, body, tail);
  cl_program prog;
  CHECK(nestcl_program_build(dev, src, "", &prog) == 0, "build: %s", nestcl_last_error());
  free(src);
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "t_hist", &err);
  CHECK(err == CL_SUCCESS, "clCreateKernel");
  hist_mem m;
  (void)hist_alloc(&m, NEURONS, cap);
  const size_t nc = (size_t)NEURONS * cap;
  struct {
    void *host;
    size_t bytes;
  } arr[] = {{m.t, nc * 8},         {m.km, nc * 8},         {m.kmt, nc * 8},         {m.access, nc * 4},
             {m.head, NEURONS * 4}, {m.len, NEURONS * 4},   {m.Kminus, NEURONS * 8}, {m.Kminus_triplet, NEURONS * 8},
             {m.last, NEURONS * 8}, {m.n_inc, NEURONS * 4}, {m.maxd, NEURONS * 8}};
  nestcl_buffer b[11], bsc, bout, brc;
  for (int a = 0; a < 11; ++a) {
    CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "history", arr[a].bytes, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              arr[a].host, &b[a]) == 0,
          "buffer");
    err = clSetKernelArg(k, (cl_uint)(a < 11 ? a : 0), sizeof(cl_mem), &b[a].mem);
  }
  const size_t out_n = (size_t)NEURONS * 3 * EVENTS;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "scenarios", NEURONS * sizeof *scs,
                            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)scs, &bsc) == 0,
        "buffer");
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "out", out_n * 8, CL_MEM_WRITE_ONLY, NULL, &bout) == 0, "buffer");
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "rc", NEURONS * 4, CL_MEM_WRITE_ONLY, NULL, &brc) == 0, "buffer");
  cl_uint ccap = cap;
  cl_int cf = fused;
  err = CL_SUCCESS;
  for (int a = 0; a < 11; ++a)
    err |= clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &b[a].mem);
  err |= clSetKernelArg(k, 11, sizeof ccap, &ccap);
  err |= clSetKernelArg(k, 12, sizeof(cl_mem), &bsc.mem);
  err |= clSetKernelArg(k, 13, sizeof(cl_mem), &bout.mem);
  err |= clSetKernelArg(k, 14, sizeof(cl_mem), &brc.mem);
  err |= clSetKernelArg(k, 15, sizeof cf, &cf);
  size_t g = NEURONS;
  cl_command_queue q = nestcl_device_queue(dev, 0);
  err |= clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
  double *out = malloc(out_n * 8);
  int rc[NEURONS];
  CHECK(out != NULL, "out of memory");
  err |= clEnqueueReadBuffer(q, bout.mem, CL_TRUE, 0, out_n * 8, out, 0, NULL, NULL);
  err |= clEnqueueReadBuffer(q, brc.mem, CL_TRUE, 0, sizeof rc, rc, 0, NULL, NULL);
  for (int a = 0; a < 11; ++a)
    err |= clEnqueueReadBuffer(q, b[a].mem, CL_TRUE, 0, arr[a].bytes, arr[a].host, 0, NULL, NULL);
  CHECK(err == CL_SUCCESS, "running the kernel");
  int bad = 0;
  for (unsigned i = 0; i < NEURONS; ++i)
    bad += rc[i] != 0;
  bad += memcmp(out, c_out, out_n * 8) != 0;
  bad += memcmp(m.t, cm->t, nc * 8) != 0 || memcmp(m.km, cm->km, nc * 8) != 0 ||
    memcmp(m.access, cm->access, nc * 4) != 0 || memcmp(m.len, cm->len, NEURONS * 4) != 0 ||
    memcmp(m.head, cm->head, NEURONS * 4) != 0 || memcmp(m.Kminus, cm->Kminus, NEURONS * 8) != 0;
  printf("device %s (%s variant): %s\n", nestcl_device_get_info(dev)->device_name, fused ? "fused" : "plain",
         bad ? "DIFFERS from the C path" : "every window, K value and history equal to the C path");
  free(out);
  for (int a = 0; a < 11; ++a)
    nestcl_buffer_free(dev, &b[a]);
  nestcl_buffer_free(dev, &bsc);
  nestcl_buffer_free(dev, &bout);
  nestcl_buffer_free(dev, &brc);
  hist_free(&m);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  nestcl_device_close(dev);
  return bad;
}

int main(void)
{
  const int fused = nestcl_libm_exp_fused() == 1;
  scenario *scs = calloc(NEURONS, sizeof *scs);
  const size_t out_n = (size_t)NEURONS * 3 * EVENTS;
  double *ref_out = malloc(out_n * 8), *c_out = malloc(out_n * 8);
  unsigned max_len[NEURONS], cap = 0;
  CHECK(scs && ref_out && c_out, "out of memory");
  for (unsigned i = 0; i < NEURONS; ++i) {
    make_scenario(i, &scs[i]);
    max_len[i] = run_ref(&scs[i], ref_out + (size_t)i * 3 * EVENTS, fused);
    cap = max_len[i] > cap ? max_len[i] : cap;
  }
  /* The ring, exactly as large as the longest history the reference kept. */
  hist_mem cm;
  nestcl_history h = hist_alloc(&cm, NEURONS, cap);
  int bad = 0;
  for (unsigned i = 0; i < NEURONS; ++i) {
    CHECK(run_c(&h, i, &scs[i], c_out + (size_t)i * 3 * EVENTS, fused) == 0, "neuron %u: overflow at cap %u", i, cap);
  }
  for (size_t e = 0; e < out_n; ++e) {
    if (nestcl_f64_bits(ref_out[e]) != nestcl_f64_bits(c_out[e])) {
      if (bad < 5)
        fprintf(stderr, "neuron %zu event %zu: reference %a, ring %a\n", e / (3 * EVENTS), e % (3 * EVENTS) / 3,
                ref_out[e], c_out[e]);
      bad++;
    }
  }
  unsigned nonempty = 0;
  for (size_t e = 0; e < out_n; e += 3) {
    const double a = fmod(c_out[e], 1e6), b = floor(c_out[e] / 1e6);
    nonempty += b > a;
  }
  printf("%u neurons, %u events each: %s; %u non-empty windows; ring of %u entries (the longest history kept)\n",
         NEURONS, EVENTS, bad ? "DIFFERS from the reference" : "every window and K value equal to the reference",
         nonempty, cap);
  CHECK(nonempty > 1000, "too few non-empty windows: the test proves little");
  /* One entry less: the neuron that needed the most must report the overflow. */
  unsigned worst = 0;
  for (unsigned i = 0; i < NEURONS; ++i)
    worst = max_len[i] > max_len[worst] ? i : worst;
  {
    hist_mem sm;
    nestcl_history s = hist_alloc(&sm, 1, max_len[worst] - 1);
    double *tmp = malloc(3 * EVENTS * 8);
    CHECK(tmp != NULL, "out of memory");
    const int overflow = run_c(&s, 0, &scs[worst], tmp, fused);
    printf("neuron %u with a ring of %u entries: %s\n", worst, max_len[worst] - 1,
           overflow ? "overflow reported" : "NO overflow reported");
    bad += !overflow;
    free(tmp);
    hist_free(&sm);
  }
  bad += compare_opencl(scs, cap, fused, c_out, &cm);
  hist_free(&cm);
  free(scs);
  free(ref_out);
  free(c_out);
  if (bad) {
    fprintf(stderr, "FAIL\n");
    return 1;
  }
  return 0;
}
