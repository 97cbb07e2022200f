/*
 * kernels_templates/nestcl_math.h compiled as OpenCL C (inside nestcl_rt_source)
 * against the same header compiled as C: exp, expm1, log1p, pow and log on
 * the arguments of numeric_math_inputs.h (the special values, then 10^6
 * random ones per function), compared bit for bit with memcmp, once with the
 * default build options and once with -cl-opt-disable, so that neither an
 * optimiser nor the device's arithmetic changes a result. This is what lets a
 * translated update() that calls exp or pow give the same bits on a CPU VP
 * and a GPU VP (docs/architecture.md, "Determinism and random numbers"). Uses the default device (NESTCL_DEVICE, else
 * the first GPU, else PoCL); exits 77 (skip) when there is no OpenCL device.
 */
#define NESTCL_CHECK_FATAL
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_math.h"
#include "nestcl_rt_source.h"
#include "numeric_math_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM n_random /* 10^6, fewer under NESTCL_TEST_DIVISOR (main) */
static size_t n_random;

/* Kernel k applies function k of numeric_math_inputs.h; the last one is nestcl_log. */
static const char *kernel_names[MATH_FUNCTIONS + 1] = {"t_exp", "t_expm1", "t_log1p", "t_pow", "t_log"};
static const char *kernels =
  "__kernel void t_exp(__global const double *x, __global const double *y, __global double *out) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_exp(x[i]);\n"
  "}\n"
  "__kernel void t_expm1(__global const double *x, __global const double *y, __global double *out) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_expm1(x[i]);\n"
  "}\n"
  "__kernel void t_log1p(__global const double *x, __global const double *y, __global double *out) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_log1p(x[i]);\n"
  "}\n"
  "__kernel void t_pow(__global const double *x, __global const double *y, __global double *out) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_pow(x[i], y[i]);\n"
  "}\n"
  "__kernel void t_log(__global const double *x, __global const double *y, __global double *out) {\n"
  "  size_t i = get_global_id(0); out[i] = nestcl_log(x[i]);\n"
  "}\n";

static nestcl_device *dev;
static cl_command_queue queue;

static nestcl_buffer alloc(size_t bytes, const void *init)
{
  nestcl_buffer b;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "math test", bytes, CL_MEM_READ_WRITE, init, &b) == 0,
        "buffer of %zu bytes", bytes);
  return b;
}

/* Runs every function on the device with program prog and compares with C. */
static void compare_all(cl_program prog, const char *build)
{
  for (int f = 0; f <= MATH_FUNCTIONS; ++f) {
    int inputs = f == MATH_FUNCTIONS ? MATH_POW : f; /* log: pow's x, positive and negative, all ranges */
    size_t n = math_count(inputs, N_RANDOM);
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    double *c_out = malloc(n * sizeof(double)), *d_out = malloc(n * sizeof(double));
    CHECK(x && y && c_out && d_out, "out of memory");
    math_inputs(inputs, N_RANDOM, x, y);
    for (size_t i = 0; i < n; ++i) {
      c_out[i] = f == MATH_FUNCTIONS ? nestcl_log(x[i]) : math_apply(f, x[i], y[i]);
    }
    nestcl_buffer bx = alloc(n * sizeof(double), x), by = alloc(n * sizeof(double), y);
    nestcl_buffer bo = alloc(n * sizeof(double), NULL);
    cl_int err;
    cl_kernel k = clCreateKernel(prog, kernel_names[f], &err);
    CHECK(err == CL_SUCCESS, "clCreateKernel(%s): %s", kernel_names[f], nestcl_cl_error_name(err));
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &bx.mem) == CL_SUCCESS &&
            clSetKernelArg(k, 1, sizeof(cl_mem), &by.mem) == CL_SUCCESS &&
            clSetKernelArg(k, 2, sizeof(cl_mem), &bo.mem) == CL_SUCCESS,
          "arguments of %s", kernel_names[f]);
    CHECK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL) == CL_SUCCESS, "enqueue %s",
          kernel_names[f]);
    CHECK(clEnqueueReadBuffer(queue, bo.mem, CL_TRUE, 0, n * sizeof(double), d_out, 0, NULL, NULL) == CL_SUCCESS,
          "reading %s", kernel_names[f]);
    const char *name = f == MATH_FUNCTIONS ? "log" : math_names[f];
    if (memcmp(d_out, c_out, n * sizeof(double)) != 0) {
      size_t bad = 0, first = n;
      for (size_t i = 0; i < n; ++i) {
        if (nestcl_f64_bits(d_out[i]) != nestcl_f64_bits(c_out[i])) {
          bad++;
          first = first < n ? first : i;
        }
      }
      CHECK(0, "%s (%s): %zu of %zu results differ; first at %s(%a, %a): device %a, C %a", name, build, bad, n, name,
            x[first], y[first], d_out[first], c_out[first]);
    }
    printf("%-6s %zu results bit-identical on C and OpenCL (%s)\n", name, n, build);
    clReleaseKernel(k);
    nestcl_buffer_free(dev, &bx);
    nestcl_buffer_free(dev, &by);
    nestcl_buffer_free(dev, &bo);
    free(x);
    free(y);
    free(c_out);
    free(d_out);
  }
}

int main(void)
{
  n_random = nestcl_test_size(1000000);
  int rc = nestcl_device_open(NULL, 1, &dev);
  if (rc == NESTCL_ENODEV) {
    printf("skipped: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  CHECK(rc == 0, "nestcl_device_open");
  const nestcl_device_info *info = nestcl_device_get_info(dev);
  printf("device: %s (%s)\n", info->device_name, info->platform_name);
  CHECK(info->fp64, "the device lacks fp64");
  queue = nestcl_device_queue(dev, 0);

  size_t len = strlen(nestcl_rt_source) + strlen(kernels) + 1;
  char *src = malloc(len);
  CHECK(src != NULL, "out of memory");
  snprintf(src, len, "%s%s", nestcl_rt_source, kernels);
  const char *builds[] = {"", "-cl-opt-disable"};
  for (int b = 0; b < 2; ++b) {
    cl_program prog;
    CHECK(nestcl_program_build(dev, src, builds[b], &prog) == 0, "building nestcl_math.h as OpenCL (%s)", builds[b]);
    compare_all(prog, b ? builds[b] : "default options");
    clReleaseProgram(prog);
  }
  free(src);
  nestcl_device_close(dev);
  printf("ok\n");
  return 0;
}
