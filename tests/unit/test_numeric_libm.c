/*
 * nestcl_libm_exp, nestcl_libm_pow and nestcl_libm_expm1
 * (kernels_templates/nestcl_libm.h) against the host's glibc exp, pow and
 * expm1, bit for bit: the variant the host's libm runs (nestcl_libm_exp_fused,
 * nestcl_libm_expm1_fused: FMA build or plain) on special values and on 10^6
 * random arguments in each of several ranges (exp: the whole domain, STDP's
 * negative decays, small |x|, near overflow, subnormal results; pow: STDP's
 * w^mu and (1 - w/Wmax)^mu, x near 1, negative bases with integer exponents,
 * huge and tiny results, subnormal bases, special values; expm1: each of its
 * reductions (k = 0, +-1, 2..19, 20..56, beyond), the *_ps models' -dt/tau,
 * near overflow, random bit patterns). ctest runs it twice: as is (on an x86-64
 * CPU with FMA, glibc's FMA build) and with GLIBC_TUNABLES hiding FMA and AVX2
 * (glibc's plain build), so both variants meet their glibc. Then, when there
 * is an OpenCL device, both variants on the device against C, bit for bit.
 * Exit 1 on any difference, or when the host's exp is neither variant.
 */
#define NESTCL_CHECK_FATAL
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_libm.h"
#include "nestcl_philox.h"
#include "nestcl_rt_source.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_RANGE per_range /* 10^6, fewer under NESTCL_TEST_DIVISOR (main) */
static size_t per_range;

static const double ranges[][2] = {
  {-745.2, 709.8}, /* the whole finite domain */
  {-10.0, 0.0}, /* (t_last - t) / tau of STDP traces */
  {-1.0, 1.0},      {-1e-6, 1e-6},  {700.0, 709.8}, /* near overflow */
  {-745.2, -700.0}, /* subnormal results */
  {-760.0, -740.0}, {709.0, 712.0}, /* overflow */
};

/* PER_RANGE uniform arguments in each range from x[k] on (stream key 2026/salt); returns the next k. */
static size_t fill_ranges(double *x, size_t k, const double (*rg)[2], size_t n_ranges, unsigned salt)
{
  for (size_t r = 0; r < n_ranges; ++r) {
    for (size_t i = 0; i < PER_RANGE; ++i) {
      nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(2026, salt), nestcl_rng_counter(r, i));
      x[k++] = rg[r][0] + (rg[r][1] - rg[r][0]) * nestcl_stream_uniform(&st);
    }
  }
  return k;
}

/* expm1: k = 0 (|x| <= ln2/2), k = +-1, k in 2..19 and 20..56, k <= -2, x beyond 56 ln2, -dt/tau */
static const double expm1_ranges[][2] = {
  {-0.35, 0.35}, {-1.04, -0.34}, {0.34, 1.04}, {1.0, 13.9},   {13.9, 39.0},    {-39.0, -1.0},
  {38.0, 709.8}, {-50.0, -38.0}, {-1e-3, 0.0}, {-1e-9, 1e-9}, {-800.0, 800.0},
};
#define EXPM1_BITS_PER per_range /* and as many arguments of random bits */

static const double expm1_specials[] = {0.0,
                                        -0.0,
                                        0x1p-54,
                                        -0x1p-54,
                                        0x1p-55,
                                        0x1p-1074,
                                        -0x1p-1074,
                                        0x1p-1022,
                                        0.34657359027997264,
                                        -0.34657359027997264,
                                        1.0397207708399179,
                                        -1.0397207708399179,
                                        38.816242111356935,
                                        -38.816242111356935,
                                        709.782712893384,
                                        709.7827128933841,
                                        709.5,
                                        710.0,
                                        -710.0,
                                        DBL_MAX,
                                        -DBL_MAX,
                                        INFINITY,
                                        -INFINITY,
                                        NAN};

static size_t make_expm1_args(double **out)
{
  const size_t n_ranges = sizeof expm1_ranges / sizeof *expm1_ranges;
  const size_t n_spec = sizeof expm1_specials / sizeof *expm1_specials;
  size_t n = n_spec + n_ranges * PER_RANGE + EXPM1_BITS_PER, k = 0;
  double *x = malloc(n * sizeof *x);
  CHECK(x != NULL, "out of memory");
  for (size_t s = 0; s < n_spec; ++s)
    x[k++] = expm1_specials[s];
  k = fill_ranges(x, k, expm1_ranges, n_ranges, 13);
  for (size_t i = 0; i < EXPM1_BITS_PER; ++i) {
    nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(2026, 14), nestcl_rng_counter(0, i));
    const nestcl_u64 hi = nestcl_stream_u32(&st), lo = nestcl_stream_u32(&st);
    x[k++] = nestcl_bits_f64(hi << 32 | lo);
  }
  *out = x;
  return n;
}

static const double specials[] = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  0x1p-54,
                                  -0x1p-54,
                                  0x1p-1074,
                                  0x1p-60,
                                  512.0,
                                  -512.0,
                                  709.782712893384,
                                  709.7827128933841,
                                  -708.3964185322641,
                                  -745.1332191019411,
                                  -745.1332191019412,
                                  1024.0,
                                  -1024.0,
                                  DBL_MAX,
                                  -DBL_MAX,
                                  INFINITY,
                                  -INFINITY,
                                  NAN};

static size_t make_args(double **out)
{
  const size_t n_ranges = sizeof ranges / sizeof *ranges, n_spec = sizeof specials / sizeof *specials;
  size_t n = n_spec + n_ranges * PER_RANGE, k = 0;
  double *x = malloc(n * sizeof *x);
  CHECK(x != NULL, "out of memory");
  for (size_t s = 0; s < n_spec; ++s)
    x[k++] = specials[s];
  k = fill_ranges(x, k, ranges, n_ranges, 11);
  *out = x;
  return n;
}

/* pow: (x range, y range) pairs; y is rounded to an integer in the negative-base range */
static const double pow_ranges[][4] = {
  {0.0, 100.0, 0.0, 1.0}, /* stdp_pl_synapse_hom: w^mu */
  {0.0, 1.0, 0.0, 1.0}, /* stdp_synapse: (1 - w/Wmax)^mu, (w/Wmax)^mu */
  {0.5, 2.0, -10.0, 10.0},    {1e-300, 1e300, -3.0, 3.0}, {0.999, 1.001, -1e5, 1e5}, /* x near 1 */
  {-5.0, 5.0, -20.0, 20.0}, /* negative bases, integer exponents */
  {1e-310, 1e-300, 0.5, 2.0}, /* subnormal bases */
  {0.1, 10.0, -700.0, 700.0}, /* huge and tiny results, subnormal ones */
};
#define POW_INTEGER_RANGE 5

static const double pow_specials[][2] = {
  {0.0, 0.0},       {-0.0, -1.0},      {0.0, -3.0},     {-0.0, 3.0},      {-0.0, 2.5},      {1.0, NAN},
  {NAN, 0.0},       {2.0, INFINITY},   {0.5, INFINITY}, {2.0, -INFINITY}, {-1.0, INFINITY}, {INFINITY, -2.0},
  {-INFINITY, 3.0}, {-INFINITY, 2.0},  {-2.0, 0.5},     {2.0, 0x1p-70},   {0.5, 0x1p-70},   {2.0, 0x1p70},
  {0.5, 0x1p70},    {-8.0, 1.0 / 3.0}, {10.0, 308.0},   {10.0, 309.0},    {10.0, -323.0},   {10.0, -324.0},
  {-10.0, -323.0},  {0x1p-1074, 0.5},  {NAN, NAN},      {1.0, 1e300},
};

static size_t make_pow_args(double **out)
{
  const size_t n_ranges = sizeof pow_ranges / sizeof *pow_ranges, n_spec = sizeof pow_specials / sizeof *pow_specials;
  size_t n = n_spec + n_ranges * PER_RANGE, k = 0;
  double *xy = malloc(2 * n * sizeof *xy);
  CHECK(xy != NULL, "out of memory");
  for (size_t s = 0; s < n_spec; ++s, ++k) {
    xy[2 * k] = pow_specials[s][0];
    xy[2 * k + 1] = pow_specials[s][1];
  }
  for (size_t r = 0; r < n_ranges; ++r) {
    for (size_t i = 0; i < PER_RANGE; ++i, ++k) {
      nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(2026, 12), nestcl_rng_counter(r, i));
      const double *R = pow_ranges[r];
      xy[2 * k] = R[0] + (R[1] - R[0]) * nestcl_stream_uniform(&st);
      const double y = R[2] + (R[3] - R[2]) * nestcl_stream_uniform(&st);
      xy[2 * k + 1] = r == POW_INTEGER_RANGE ? round(y) : y;
    }
  }
  *out = xy;
  return n;
}

static int same(double a, double b)
{
  return nestcl_f64_bits(a) == nestcl_f64_bits(b) || (isnan(a) && isnan(b));
}

static const char *kernel_text =
  "__kernel void t_libm_exp(__global const double *x, __global double *out, int fused) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_libm_exp(x[i], fused);\n"
  "}\n"
  "__kernel void t_libm_pow(__global const double *xy, __global double *out, int fused) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_libm_pow(xy[2 * i], xy[2 * i + 1], fused);\n"
  "}\n"
  "__kernel void t_libm_expm1(__global const double *x, __global double *out, int fused) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_libm_expm1(x[i], fused);\n"
  "}\n";

enum { FN_EXP, FN_POW, FN_EXPM1 };
static const char *const fn_name[] = {"exp", "pow", "expm1"};

/* The C twin of a device result: exp or expm1 of in[i], or pow of (in[2i], in[2i+1]). */
static double reference(int fn, const double *in, size_t i, int fused)
{
  return fn == FN_POW ? nestcl_libm_pow(in[2 * i], in[2 * i + 1], fused)
    : fn == FN_EXPM1  ? nestcl_libm_expm1(in[i], fused)
                      : nestcl_libm_exp(in[i], fused);
}

/* One function's both variants on the device against C: the number that differ. */
static int device_variants(nestcl_device *dev, cl_program prog, int fn, const double *in, size_t n)
{
  const char *name = fn_name[fn];
  const size_t in_bytes = n * 8 * (fn == FN_POW ? 2 : 1);
  char kname[32];
  snprintf(kname, sizeof kname, "t_libm_%s", name);
  cl_int err;
  cl_kernel k = clCreateKernel(prog, kname, &err);
  CHECK(err == CL_SUCCESS, "clCreateKernel");
  nestcl_buffer bx, bo;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "in", in_bytes, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)in,
                            &bx) == 0,
        "buffer");
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "out", n * 8, CL_MEM_WRITE_ONLY, NULL, &bo) == 0, "buffer");
  double *got = malloc(n * sizeof *got);
  CHECK(got != NULL, "out of memory");
  cl_command_queue q = nestcl_device_queue(dev, 0);
  int bad = 0;
  for (cl_int fused = 0; fused <= 1; ++fused) {
    err = clSetKernelArg(k, 0, sizeof(cl_mem), &bx.mem);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &bo.mem);
    err |= clSetKernelArg(k, 2, sizeof fused, &fused);
    err |= clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
    err |= clEnqueueReadBuffer(q, bo.mem, CL_TRUE, 0, n * 8, got, 0, NULL, NULL);
    CHECK(err == CL_SUCCESS, "running the kernel");
    size_t diff = 0;
    for (size_t i = 0; i < n; ++i) {
      const double c = reference(fn, in, i, fused);
      if (!same(got[i], c)) {
        if (diff < 3)
          fprintf(stderr, "device %s %s(argument %zu) = %a, C %a\n", fused ? "fused" : "plain", name, i, got[i], c);
        diff++;
      }
    }
    printf("%s: %s variant on %s: %zu of %zu differ from C\n", name, fused ? "fused" : "plain",
           nestcl_device_get_info(dev)->device_name, diff, n);
    bad += diff != 0;
  }
  free(got);
  nestcl_buffer_free(dev, &bx);
  nestcl_buffer_free(dev, &bo);
  clReleaseKernel(k);
  return bad;
}

/* The functions' both variants on the device against C; 0 when there is no device. */
static int compare_opencl(const double *x, size_t n, const double *xy, size_t n_pow, const double *xm, size_t n_m1)
{
  nestcl_device *dev;
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("no OpenCL device (%s): the device comparison is skipped\n", nestcl_last_error());
    return 0;
  }
  size_t len = strlen(nestcl_rt_source) + strlen(kernel_text) + 2;
  char *src = malloc(len);
  CHECK(src != NULL, "out of memory");
  snprintf(src, len, "%s\n%s", nestcl_rt_source, kernel_text);
  cl_program prog;
  CHECK(nestcl_program_build(dev, src, "", &prog) == 0, "build: %s", nestcl_last_error());
  free(src);
  int bad = device_variants(dev, prog, FN_EXP, x, n) + device_variants(dev, prog, FN_POW, xy, n_pow) +
    device_variants(dev, prog, FN_EXPM1, xm, n_m1);
  clReleaseProgram(prog);
  nestcl_device_close(dev);
  return bad;
}

/* The arguments where the host's f and the emulation emu in variant fused differ; the first five printed. */
static size_t host_diffs(const char *name, double (*f)(double), double (*emu)(double, int), const double *x, size_t n,
                         int fused)
{
  size_t diff = 0;
  for (size_t i = 0; i < n; ++i) {
    volatile double xi = x[i];
    const double g = f(xi), m = emu(xi, fused);
    if (!same(g, m)) {
      if (diff < 5)
        fprintf(stderr, "%s(%a): glibc %a, nestcl_libm_%s %a\n", name, x[i], g, name, m);
      diff++;
    }
  }
  return diff;
}

int main(void)
{
  per_range = nestcl_test_size(1000000);
  double *x, *xy, *xm;
  const size_t n = make_args(&x), n_pow = make_pow_args(&xy), n_m1 = make_expm1_args(&xm);
  const int fused = nestcl_libm_exp_fused(), fused_m1 = nestcl_libm_expm1_fused();
  CHECK(fused >= 0, "the host's exp is neither of glibc's builds: nestcl_libm_exp cannot reproduce it");
  CHECK(fused_m1 >= 0, "the host's expm1 is neither of glibc's builds: nestcl_libm_expm1 cannot reproduce it");
  CHECK(fused_m1 == fused,
        "the host's expm1 is glibc's %s build but its exp the %s one (glibc before 2.35?): "
        "kernels take one variant for both",
        fused_m1 ? "FMA" : "plain", fused ? "FMA" : "plain");
  size_t diff = 0, diff_pow = 0, diff_m1 = 0;
  diff_m1 = host_diffs("expm1", expm1, nestcl_libm_expm1, xm, n_m1, fused_m1);
  diff = host_diffs("exp", exp, nestcl_libm_exp, x, n, fused);
  for (size_t i = 0; i < n_pow; ++i) {
    volatile double xi = xy[2 * i], yi = xy[2 * i + 1];
    const double g = pow(xi, yi), m = nestcl_libm_pow(xi, yi, fused);
    if (!same(g, m)) {
      if (diff_pow < 5)
        fprintf(stderr, "pow(%a, %a): glibc %a, nestcl_libm_pow %a\n", xy[2 * i], xy[2 * i + 1], g, m);
      diff_pow++;
    }
  }
  printf("host libm runs glibc's %s build; nestcl_libm_exp: %zu of %zu arguments differ; nestcl_libm_pow: %zu of "
         "%zu; nestcl_libm_expm1: %zu of %zu\n",
         fused ? "FMA" : "plain", diff, n, diff_pow, n_pow, diff_m1, n_m1);
  int bad = diff != 0 || diff_pow != 0 || diff_m1 != 0;
  bad += compare_opencl(x, n, xy, n_pow, xm, n_m1);
  free(x);
  free(xy);
  free(xm);
  if (bad) {
    fprintf(stderr, "FAIL\n");
    return 1;
  }
  return 0;
}
