/*
 * nestcl_libm_exp (kernels_templates/nestcl_libm.h) against the host's glibc
 * exp, bit for bit: the variant the host's libm runs (nestcl_libm_exp_fused:
 * FMA build or plain) on special values and on 10^6 random arguments in each
 * of several ranges (the whole domain, STDP's negative decays, small |x|,
 * near overflow, subnormal results). ctest runs it twice: as is (on an x86-64
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

#define PER_RANGE 1000000

static const double ranges[][2] = {
  {-745.2, 709.8}, /* the whole finite domain */
  {-10.0, 0.0},    /* (t_last - t) / tau of STDP traces */
  {-1.0, 1.0},
  {-1e-6, 1e-6},
  {700.0, 709.8},   /* near overflow */
  {-745.2, -700.0}, /* subnormal results */
  {-760.0, -740.0},
  {709.0, 712.0},   /* overflow */
};

static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0x1p-54, -0x1p-54, 0x1p-1074, 0x1p-60, 512.0, -512.0,
                                  709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411,
                                  -745.1332191019412, 1024.0, -1024.0, DBL_MAX, -DBL_MAX, INFINITY, -INFINITY, NAN};

static size_t make_args(double **out)
{
  const size_t n_ranges = sizeof ranges / sizeof *ranges, n_spec = sizeof specials / sizeof *specials;
  size_t n = n_spec + n_ranges * PER_RANGE, k = 0;
  double *x = malloc(n * sizeof *x);
  CHECK(x != NULL, "out of memory");
  for (size_t s = 0; s < n_spec; ++s) x[k++] = specials[s];
  for (size_t r = 0; r < n_ranges; ++r) {
    for (size_t i = 0; i < PER_RANGE; ++i) {
      nestcl_rng_stream st = nestcl_stream_init(nestcl_rng_key(2026, 11), nestcl_rng_counter(r, i));
      x[k++] = ranges[r][0] + (ranges[r][1] - ranges[r][0]) * nestcl_stream_uniform(&st);
    }
  }
  *out = x;
  return n;
}

static int same(double a, double b) { return nestcl_f64_bits(a) == nestcl_f64_bits(b) || (isnan(a) && isnan(b)); }

static const char *kernel_text =
    "__kernel void t_libm_exp(__global const double *x, __global double *out, int fused) {\n"
    "  size_t i = get_global_id(0); out[i] = nestcl_libm_exp(x[i], fused);\n"
    "}\n";

/* Both variants on the device against C; 0 when there is no device. */
static int compare_opencl(const double *x, size_t n)
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
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "t_libm_exp", &err);
  CHECK(err == CL_SUCCESS, "clCreateKernel");
  nestcl_buffer bx, bo;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "x", n * 8, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)x,
                            &bx) == 0, "buffer");
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
      const double c = nestcl_libm_exp(x[i], fused);
      if (!same(got[i], c)) {
        if (diff < 3) fprintf(stderr, "device %s: exp(%a) = %a, C %a\n", fused ? "fused" : "plain", x[i], got[i], c);
        diff++;
      }
    }
    printf("%s variant on %s: %zu of %zu differ from C\n", fused ? "fused" : "plain",
           nestcl_device_get_info(dev)->device_name, diff, n);
    bad += diff != 0;
  }
  free(got);
  nestcl_buffer_free(dev, &bx);
  nestcl_buffer_free(dev, &bo);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  nestcl_device_close(dev);
  return bad;
}

int main(void)
{
  double *x;
  size_t n = make_args(&x);
  const int fused = nestcl_libm_exp_fused();
  CHECK(fused >= 0, "the host's exp is neither of glibc's builds: nestcl_libm_exp cannot reproduce it");
  size_t diff = 0;
  for (size_t i = 0; i < n; ++i) {
    volatile double xi = x[i];
    const double g = exp(xi), m = nestcl_libm_exp(xi, fused);
    if (!same(g, m)) {
      if (diff < 5) fprintf(stderr, "exp(%a): glibc %a, nestcl_libm_exp %a\n", x[i], g, m);
      diff++;
    }
  }
  printf("host libm runs glibc's %s build; nestcl_libm_exp: %zu of %zu arguments differ\n",
         fused ? "FMA" : "plain", diff, n);
  int bad = diff != 0;
  bad += compare_opencl(x, n);
  free(x);
  if (bad) {
    fprintf(stderr, "FAIL\n");
    return 1;
  }
  return 0;
}
