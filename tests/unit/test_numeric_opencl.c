/*
 * The runtime headers compiled as OpenCL C (nestcl_rt_source) against the same
 * headers compiled as C: Philox-4x32-10 known-answer vectors on the device,
 * then 10^6 uniform, normal and Poisson draws (three rates) and the portable
 * log for the same keys and counters, compared bit for bit with memcmp; the
 * double -> fixed conversion; 10^5 weights summed with 64-bit atomics from
 * 10^5 work items in 10 shuffled orders (one kernel run each), which must give
 * the C total exactly; and the ring and spike-list helpers. This is the
 * acceptance test of the claim of docs/architecture.md, "Determinism and random numbers", that a
 * CPU VP and a GPU VP draw and
 * accumulate the same numbers. The draws are repeated with the program built
 * with -cl-opt-disable, so an optimiser that changes floating point shows. Uses the default device (NESTCL_DEVICE, else
 * the first GPU, else PoCL); exits 77 (skip) when there is no OpenCL device.
 */
#define NESTCL_CHECK_FATAL
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_philox.h"
#include "nestcl_ring.h"
#include "nestcl_rt_source.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_OK(call) CHECK((call) == CL_SUCCESS, "%s", #call)

static const char *kernels =
  "__kernel void t_kat(__global const uint *in, __global uint *out) {\n"
  "  size_t t = get_global_id(0);\n"
  "  nestcl_philox_ctr c; nestcl_philox_key k;\n"
  "  for (int w = 0; w < 4; ++w) c.v[w] = in[t * 6 + w];\n"
  "  k.v[0] = in[t * 6 + 4]; k.v[1] = in[t * 6 + 5];\n"
  "  nestcl_philox_ctr r = nestcl_philox4x32_10(c, k);\n"
  "  for (int w = 0; w < 4; ++w) out[t * 4 + w] = r.v[w];\n"
  "}\n"
  "__kernel void t_uniform(uint seed, ulong step, __global double *out) {\n"
  "  size_t i = get_global_id(0);\n"
  "  out[i] = nestcl_rng_uniform(nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_TEST), nestcl_rng_counter(i, step));\n"
  "}\n"
  "__kernel void t_normal(uint seed, ulong step, __global double *out) {\n"
  "  size_t i = get_global_id(0);\n"
  "  out[i] = nestcl_rng_normal(nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_TEST), nestcl_rng_counter(i, step));\n"
  "}\n"
  "__kernel void t_poisson(uint seed, ulong step, double mu, double e, uint chunks, __global uint *out) {\n"
  "  size_t i = get_global_id(0);\n"
  "  out[i] = nestcl_rng_poisson(nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_POISSON),\n"
  "                              nestcl_rng_counter(i, step), mu, e, chunks);\n"
  "}\n"
  "__kernel void t_stream(uint seed, double mu, double e, uint chunks, __global double *out) {\n"
  "  size_t i = get_global_id(0);\n"
  "  nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_MODEL),\n"
  "                                           nestcl_rng_counter(i, 7));\n"
  "  out[4 * i] = nestcl_stream_uniform(&s);\n"
  "  out[4 * i + 1] = nestcl_stream_normal(&s);\n"
  "  out[4 * i + 2] = (double)nestcl_stream_poisson(&s, mu, e, chunks);\n"
  "  out[4 * i + 3] = (double)nestcl_stream_u32(&s);\n"
  "}\n"
  "__kernel void t_log(__global const double *x, __global double *y) {\n"
  "  size_t i = get_global_id(0);\n"
  "  y[i] = nestcl_log(x[i]);\n"
  "}\n"
  "__kernel void t_to_fixed(__global const double *x, __global long *y) {\n"
  "  size_t i = get_global_id(0);\n"
  "  y[i] = nestcl_fixed_from_double(x[i]);\n"
  "}\n"
  "__kernel void t_fixed_sum(__global const double *w, __global const uint *perm, __global long *total,\n"
  "                          __global long *ring, long origin) {\n"
  "  uint i = (uint)get_global_id(0);\n"
  "  double x = w[perm[i]];\n"
  "  nestcl_fixed_add(total, nestcl_fixed_from_double(x));\n"
  "  nestcl_ring_add(ring, 2u, 3u, nestcl_ring_slot(origin, i % 5u, 4u), i % 2u, i % 3u, x);\n"
  "}\n"
  "__kernel void t_ring_read(__global long *ring, __global double *out) {\n"
  "  uint i = (uint)get_global_id(0);\n"
  "  out[2 * i] = nestcl_ring_peek(ring, 2u, 3u, 1u, 1u, i);\n"
  "  out[2 * i + 1] = nestcl_ring_take(ring, 2u, 3u, 1u, 0u, i);\n"
  "  nestcl_ring_zero_all(ring, 2u, 3u, 2u, i);\n"
  "}\n"
  "__kernel void t_spikes(__global uint *count, __global uint2 *spikes, uint cap) {\n"
  "  uint i = (uint)get_global_id(0);\n"
  "  if (i % 3u == 0u) nestcl_emit_spike(count, spikes, cap, i, i % 15u);\n"
  "}\n";

/* Sizes: 10^6 draws and 10^5 weights, fewer under NESTCL_TEST_DIVISOR (main). */
#define N_DRAWS n_draws
#define N_WEIGHTS n_weights
static size_t n_draws, n_weights;
static int full_size; /* the moment checks below hold at 10^6 draws */
#define N_ORDERS 10

static nestcl_device *dev;
static cl_program prog;
static cl_command_queue queue;

/* Runs kernel 'name' over 'global' work items; args are (size, pointer) pairs, buffers given as cl_mem. */
static void run(const char *name, size_t global, int nargs, ...)
{
  cl_int err;
  cl_kernel k = clCreateKernel(prog, name, &err);
  CHECK(err == CL_SUCCESS, "clCreateKernel(%s): %s", name, nestcl_cl_error_name(err));
  va_list ap;
  va_start(ap, nargs);
  for (int a = 0; a < nargs; ++a) {
    size_t size = va_arg(ap, size_t);
    const void *ptr = va_arg(ap, const void *);
    err = clSetKernelArg(k, (cl_uint)a, size, ptr);
    CHECK(err == CL_SUCCESS, "%s arg %d: %s", name, a, nestcl_cl_error_name(err));
  }
  va_end(ap);
  err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
  CHECK(err == CL_SUCCESS, "enqueue %s: %s", name, nestcl_cl_error_name(err));
  CL_OK(clFinish(queue));
  clReleaseKernel(k);
}

static nestcl_buffer alloc(size_t bytes, const void *init)
{
  nestcl_buffer b;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "numeric test", bytes, CL_MEM_READ_WRITE, init, &b) == 0,
        "buffer of %zu bytes", bytes);
  return b;
}

static void readback(nestcl_buffer *b, void *dst, size_t bytes)
{
  CL_OK(clEnqueueReadBuffer(queue, b->mem, CL_TRUE, 0, bytes, dst, 0, NULL, NULL));
}

static void test_kat(void)
{
  static const uint32_t kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
    {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x408f276du, 0x41c83b0eu,
     0xa20bc7c6u, 0x6d5451fdu},
    {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0xd16cfe09u, 0x94fdccebu,
     0x5001e420u, 0x24126ea1u},
  };
  uint32_t in[3 * 6], out[3 * 4];
  for (int t = 0; t < 3; ++t) {
    memcpy(&in[t * 6], kat[t], 6 * sizeof(uint32_t));
  }
  nestcl_buffer bin = alloc(sizeof in, in), bout = alloc(sizeof out, NULL);
  run("t_kat", 3, 2, sizeof(cl_mem), &bin.mem, sizeof(cl_mem), &bout.mem);
  readback(&bout, out, sizeof out);
  for (int t = 0; t < 3; ++t) {
    for (int w = 0; w < 4; ++w) {
      CHECK(out[t * 4 + w] == kat[t][6 + w], "device KAT %d word %d: %08x, want %08x", t, w, out[t * 4 + w],
            kat[t][6 + w]);
    }
  }
  nestcl_buffer_free(dev, &bin);
  nestcl_buffer_free(dev, &bout);
  printf("Philox-4x32-10 known-answer vectors: ok on the device\n");
}

/* Compares n doubles bit for bit and says where the first difference is. */
static void same_bits(const char *what, const void *dev_out, const void *c_out, size_t elem, size_t n)
{
  if (memcmp(dev_out, c_out, elem * n) == 0) {
    printf("%s: %zu values bit-identical on C and OpenCL\n", what, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (memcmp((const char *)dev_out + i * elem, (const char *)c_out + i * elem, elem)) {
      if (elem == sizeof(double)) {
        fprintf(stderr, "%s[%zu]: device %a, C %a\n", what, i, ((const double *)dev_out)[i],
                ((const double *)c_out)[i]);
      } else {
        fprintf(stderr, "%s[%zu]: device %u, C %u\n", what, i, ((const uint32_t *)dev_out)[i],
                ((const uint32_t *)c_out)[i]);
      }
      break;
    }
  }
  CHECK(0, "%s differ between C and OpenCL", what);
}

static void test_draws(void)
{
  const cl_uint seed = 987654321u;
  const cl_ulong step = UINT64_C(0x0000123487654321); /* above 2^32: uses every counter word */
  double *dv = malloc(sizeof(double) * 4 * N_DRAWS), *cv = malloc(sizeof(double) * 4 * N_DRAWS);
  uint32_t *dk = malloc(sizeof(uint32_t) * N_DRAWS), *ck = malloc(sizeof(uint32_t) * N_DRAWS);
  CHECK(dv && cv && dk && ck, "out of memory");
  nestcl_buffer bd = alloc(sizeof(double) * 4 * N_DRAWS, NULL);
  nestcl_buffer bk = alloc(sizeof(uint32_t) * N_DRAWS, NULL);
  nestcl_philox_key key = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_TEST);

  run("t_uniform", N_DRAWS, 3, sizeof seed, &seed, sizeof step, &step, sizeof(cl_mem), &bd.mem);
  readback(&bd, dv, sizeof(double) * N_DRAWS);
  double mean = 0.0;
  for (size_t i = 0; i < N_DRAWS; ++i) {
    cv[i] = nestcl_rng_uniform(key, nestcl_rng_counter(i, step));
    mean += cv[i];
  }
  same_bits("uniform", dv, cv, sizeof(double), N_DRAWS);
  CHECK(!full_size || fabs(mean / N_DRAWS - 0.5) < 1.5e-3, "uniform mean %.6f", mean / N_DRAWS);

  run("t_normal", N_DRAWS, 3, sizeof seed, &seed, sizeof step, &step, sizeof(cl_mem), &bd.mem);
  readback(&bd, dv, sizeof(double) * N_DRAWS);
  double s = 0.0, s2 = 0.0;
  for (size_t i = 0; i < N_DRAWS; ++i) {
    cv[i] = nestcl_rng_normal(key, nestcl_rng_counter(i, step));
    s += cv[i];
    s2 += cv[i] * cv[i];
  }
  same_bits("normal", dv, cv, sizeof(double), N_DRAWS);
  mean = s / N_DRAWS;
  double var = s2 / N_DRAWS - mean * mean;
  printf("normal: mean %.5f variance %.5f\n", mean, var);
  CHECK(!full_size || (fabs(mean) < 5e-3 && fabs(var - 1.0) < 7e-3), "normal moments %.5f %.5f", mean, var);

  const double lambdas[] = {0.01, 2.09, 20.0, 123.4};
  nestcl_philox_key pkey = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_POISSON);
  for (size_t l = 0; l < sizeof lambdas / sizeof lambdas[0]; ++l) {
    nestcl_poisson_param p = {0.0, 1.0, 1u};
    CHECK(nestcl_poisson_setup(lambdas[l], &p) == 0, "poisson setup");
    cl_ulong pstep = step + l;
    run("t_poisson", N_DRAWS, 6, sizeof seed, &seed, sizeof pstep, &pstep, sizeof p.mu, &p.mu, sizeof p.exp_neg_mu,
        &p.exp_neg_mu, sizeof p.chunks, &p.chunks, sizeof(cl_mem), &bk.mem);
    readback(&bk, dk, sizeof(uint32_t) * N_DRAWS);
    double sum = 0.0;
    for (size_t i = 0; i < N_DRAWS; ++i) {
      ck[i] = nestcl_rng_poisson(pkey, nestcl_rng_counter(i, pstep), p.mu, p.exp_neg_mu, p.chunks);
      sum += ck[i];
    }
    char what[64];
    snprintf(what, sizeof what, "poisson(%g)", lambdas[l]);
    same_bits(what, dk, ck, sizeof(uint32_t), N_DRAWS);
    CHECK(!full_size || fabs(sum / N_DRAWS - lambdas[l]) < 5.0 * sqrt(lambdas[l] / N_DRAWS), "%s mean %.5f", what,
          sum / N_DRAWS);
  }

  /* Mixed draws from one stream: words shared across blocks must line up too. */
  nestcl_poisson_param p = {0.0, 1.0, 1u};
  CHECK(nestcl_poisson_setup(2.09, &p) == 0, "poisson setup");
  run("t_stream", N_DRAWS, 5, sizeof seed, &seed, sizeof p.mu, &p.mu, sizeof p.exp_neg_mu, &p.exp_neg_mu,
      sizeof p.chunks, &p.chunks, sizeof(cl_mem), &bd.mem);
  readback(&bd, dv, sizeof(double) * 4 * N_DRAWS);
  nestcl_philox_key mkey = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_MODEL);
  for (size_t i = 0; i < N_DRAWS; ++i) {
    nestcl_rng_stream st = nestcl_stream_init(mkey, nestcl_rng_counter(i, 7));
    cv[4 * i] = nestcl_stream_uniform(&st);
    cv[4 * i + 1] = nestcl_stream_normal(&st);
    cv[4 * i + 2] = (double)nestcl_stream_poisson(&st, p.mu, p.exp_neg_mu, p.chunks);
    cv[4 * i + 3] = (double)nestcl_stream_u32(&st);
  }
  same_bits("stream (uniform, normal, poisson, word)", dv, cv, sizeof(double), 4 * (size_t)N_DRAWS);

  /* The log over many binades, including subnormals. */
  nestcl_philox_key lkey = nestcl_rng_key(seed, NESTCL_RNG_PURPOSE_TEST);
  for (uint32_t i = 0; i < N_DRAWS; ++i) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 3), lkey);
    uint64_t bits = ((uint64_t)(r.v[0] % 2047u) << 52) | (((uint64_t)r.v[1] << 32 | r.v[2]) >> 12);
    cv[i] = (i % 2) ? nestcl_bits_f64(bits) : nestcl_u01_53(r.v[2], r.v[3]);
  }
  nestcl_buffer bx = alloc(sizeof(double) * N_DRAWS, cv);
  run("t_log", N_DRAWS, 2, sizeof(cl_mem), &bx.mem, sizeof(cl_mem), &bd.mem);
  readback(&bd, dv, sizeof(double) * N_DRAWS);
  for (size_t i = 0; i < N_DRAWS; ++i) {
    cv[i] = nestcl_log(cv[i]);
  }
  same_bits("nestcl_log", dv, cv, sizeof(double), N_DRAWS);

  nestcl_buffer_free(dev, &bx);
  nestcl_buffer_free(dev, &bd);
  nestcl_buffer_free(dev, &bk);
  free(dv);
  free(cv);
  free(dk);
  free(ck);
}

static void test_fixed(void)
{
  double *w = malloc(sizeof(double) * N_WEIGHTS);
  int64_t *wf = malloc(sizeof(int64_t) * N_WEIGHTS), *df = malloc(sizeof(int64_t) * N_WEIGHTS);
  uint32_t *perm = malloc(sizeof(uint32_t) * N_WEIGHTS);
  CHECK(w && wf && df && perm, "out of memory");
  nestcl_philox_key key = nestcl_rng_key(11u, NESTCL_RNG_PURPOSE_TEST);
  int64_t c_total = 0;
  for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
    nestcl_philox_ctr r = nestcl_philox4x32_10(nestcl_rng_counter(i, 0), key);
    double mag = 300.0 * nestcl_u01_53(r.v[0], r.v[1]);
    w[i] = (r.v[2] & 1u) ? -mag : mag;
    if (i % 1000 == 0) { /* exact ties of the rounding */
      w[i] = ((double)(r.v[3] % 100000u) + 0.5) * ((r.v[2] & 1u) ? -0x1p-32 : 0x1p-32);
    }
    wf[i] = nestcl_fixed_from_double(w[i]);
    nestcl_fixed_add(&c_total, wf[i]);
  }
  nestcl_buffer bw = alloc(sizeof(double) * N_WEIGHTS, w);
  nestcl_buffer bf = alloc(sizeof(int64_t) * N_WEIGHTS, NULL);
  run("t_to_fixed", N_WEIGHTS, 2, sizeof(cl_mem), &bw.mem, sizeof(cl_mem), &bf.mem);
  readback(&bf, df, sizeof(int64_t) * N_WEIGHTS);
  same_bits("fixed conversion (as 2 x 32 bits)", df, wf, sizeof(uint32_t), 2 * (size_t)N_WEIGHTS);

  /* The C ring for the same additions, in the natural order. */
  int64_t c_ring[4 * 2 * 3] = {0}, d_ring[4 * 2 * 3];
  const cl_long origin = -7;
  for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
    nestcl_ring_add(c_ring, 2, 3, nestcl_ring_slot(origin, i % 5u, 4), i % 2u, i % 3u, w[i]);
  }
  /* Work item i adds w[perm[i]] and lands in a ring cell chosen by i, so use the inverse view in C. */
  nestcl_buffer bp = alloc(sizeof(uint32_t) * N_WEIGHTS, NULL);
  nestcl_buffer bt = alloc(sizeof(int64_t), NULL);
  nestcl_buffer br = alloc(sizeof d_ring, NULL);
  double dsum[N_ORDERS];
  for (uint32_t o = 0; o < N_ORDERS; ++o) {
    nestcl_rng_stream s = nestcl_stream_init(nestcl_rng_key(12u, NESTCL_RNG_PURPOSE_TEST), nestcl_rng_counter(o, 1));
    for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
      perm[i] = i;
    }
    if (o > 0) { /* order 0 is the identity, so the C ring above is its reference */
      for (uint32_t i = N_WEIGHTS - 1; i > 0; --i) {
        uint32_t j = (uint32_t)(nestcl_stream_uniform(&s) * (double)(i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
    }
    dsum[o] = 0.0;
    for (uint32_t i = 0; i < N_WEIGHTS; ++i) {
      dsum[o] += w[perm[i]];
    }
    const int64_t zero = 0;
    const int64_t zeros[4 * 2 * 3] = {0};
    CL_OK(clEnqueueWriteBuffer(queue, bp.mem, CL_TRUE, 0, sizeof(uint32_t) * N_WEIGHTS, perm, 0, NULL, NULL));
    CL_OK(clEnqueueWriteBuffer(queue, bt.mem, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));
    CL_OK(clEnqueueWriteBuffer(queue, br.mem, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL));
    run("t_fixed_sum", N_WEIGHTS, 5, sizeof(cl_mem), &bw.mem, sizeof(cl_mem), &bp.mem, sizeof(cl_mem), &bt.mem,
        sizeof(cl_mem), &br.mem, sizeof origin, &origin);
    int64_t d_total;
    readback(&bt, &d_total, sizeof d_total);
    CHECK(d_total == c_total, "order %u: device total %lld, C total %lld", o, (long long)d_total, (long long)c_total);
    readback(&br, d_ring, sizeof d_ring);
    int64_t ring_total = 0;
    for (int c = 0; c < 4 * 2 * 3; ++c) {
      ring_total = nestcl_fixed_sum(ring_total, d_ring[c]);
    }
    CHECK(ring_total == c_total, "order %u: ring cells do not add up to the total", o);
    if (o == 0) {
      CHECK(memcmp(d_ring, c_ring, sizeof c_ring) == 0, "device ring differs from the C ring");
    }
  }
  printf("fixed point: %zu weights in %d shuffled orders with device atomics: total %lld (%.17g) every time, "
         "equal to C\n",
         N_WEIGHTS, N_ORDERS, (long long)c_total, nestcl_fixed_to_double(c_total));
  printf("double sums of the same orders (for contrast, not asserted):");
  for (int o = 0; o < N_ORDERS; ++o) {
    printf(" %.17g", dsum[o]);
  }
  printf("\n");

  /* Ring reads on the device: peek keeps, take clears, zero_all clears every channel. */
  int64_t ring[4 * 2 * 3];
  for (int c = 0; c < 4 * 2 * 3; ++c) {
    ring[c] = nestcl_fixed_from_double(0.25 * (c + 1));
  }
  CL_OK(clEnqueueWriteBuffer(queue, br.mem, CL_TRUE, 0, sizeof ring, ring, 0, NULL, NULL));
  double got[6];
  nestcl_buffer bo = alloc(sizeof got, NULL);
  run("t_ring_read", 3, 2, sizeof(cl_mem), &br.mem, sizeof(cl_mem), &bo.mem);
  readback(&bo, got, sizeof got);
  readback(&br, d_ring, sizeof d_ring);
  for (uint32_t i = 0; i < 3; ++i) {
    CHECK(got[2 * i] == nestcl_ring_peek(ring, 2, 3, 1, 1, i), "device peek %u", i);
    CHECK(got[2 * i + 1] == nestcl_ring_take(ring, 2, 3, 1, 0, i), "device take %u", i);
    nestcl_ring_zero_all(ring, 2, 3, 2, i);
  }
  CHECK(memcmp(ring, d_ring, sizeof ring) == 0, "ring after take/zero_all differs");

  nestcl_buffer_free(dev, &bo);
  nestcl_buffer_free(dev, &bw);
  nestcl_buffer_free(dev, &bf);
  nestcl_buffer_free(dev, &bp);
  nestcl_buffer_free(dev, &bt);
  nestcl_buffer_free(dev, &br);
  free(w);
  free(wf);
  free(df);
  free(perm);
}

static void test_spikes(void)
{
  enum { ITEMS = 3000, CAP = 600 }; /* 1000 emitters, room for 600 */
  const cl_uint cap = CAP, zero = 0;
  nestcl_buffer bc = alloc(sizeof(cl_uint), &zero);
  nestcl_buffer bs = alloc(sizeof(cl_uint) * 2 * (CAP + 1), NULL);
  cl_uint sentinel[2 * (CAP + 1)];
  memset(sentinel, 0xff, sizeof sentinel);
  CL_OK(clEnqueueWriteBuffer(queue, bs.mem, CL_TRUE, 0, sizeof sentinel, sentinel, 0, NULL, NULL));
  run("t_spikes", ITEMS, 3, sizeof(cl_mem), &bc.mem, sizeof(cl_mem), &bs.mem, sizeof cap, &cap);
  cl_uint count, spikes[2 * (CAP + 1)];
  readback(&bc, &count, sizeof count);
  readback(&bs, spikes, sizeof spikes);
  CHECK(count == ITEMS / 3, "spike counter %u, want %d (it must count past the capacity)", count, ITEMS / 3);
  static unsigned char seen[ITEMS];
  for (int s = 0; s < CAP; ++s) {
    cl_uint i = spikes[2 * s], lag = spikes[2 * s + 1];
    CHECK(i < ITEMS && i % 3 == 0 && lag == i % 15 && !seen[i], "spike %d = (%u, %u)", s, i, lag);
    seen[i] = 1;
  }
  CHECK(spikes[2 * CAP] == 0xffffffffu, "a spike was written past the capacity");
  nestcl_buffer_free(dev, &bc);
  nestcl_buffer_free(dev, &bs);
  printf("spike list: %u emitted, %d stored, overflow visible in the counter\n", count, CAP);
}

int main(void)
{
  n_draws = nestcl_test_size(1000000);
  n_weights = nestcl_test_size(100000);
  full_size = nestcl_test_divisor() == 1;
  int rc = nestcl_device_open(NULL, 1, &dev);
  if (rc == NESTCL_ENODEV) {
    printf("skipped: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  CHECK(rc == 0, "nestcl_device_open");
  const nestcl_device_info *info = nestcl_device_get_info(dev);
  printf("device: %s (%s)\n", info->device_name, info->platform_name);
  CHECK(info->fp64 && info->int64_atomics, "the device lacks fp64 or 64-bit atomics");
  queue = nestcl_device_queue(dev, 0);

  size_t len = strlen(nestcl_rt_source) + strlen(kernels) + 1;
  char *src = malloc(len);
  CHECK(src != NULL, "out of memory");
  snprintf(src, len, "%s%s", nestcl_rt_source, kernels);
  CHECK(nestcl_program_build(dev, src, "", &prog) == 0, "building the runtime headers as OpenCL");

  test_kat();
  test_draws();
  test_fixed();
  test_spikes();
  clReleaseProgram(prog);

  /* The optimiser must not change a draw either (contraction, reassociation). */
  CHECK(nestcl_program_build(dev, src, "-cl-opt-disable", &prog) == 0, "building with -cl-opt-disable");
  test_draws();
  clReleaseProgram(prog);
  free(src);

  nestcl_device_close(dev);
  printf("ok\n");
  return 0;
}
