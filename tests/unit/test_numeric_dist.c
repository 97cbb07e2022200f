/*
 * Unit test of kernels_templates/nestcl_dist.h, NEST's random distributions
 * for translated models (pp_psc_delta's Poisson spike counts and gamma dead
 * times): for each distribution and a few parameter sets, 2 * 10^5 draws on
 * distinct (neuron id) streams must have the distribution's mean and variance
 * (within 5 standard errors; a generator that is deterministic but wrong
 * fails), Poisson and binomial also their probability of 0; and the same
 * draws compiled as OpenCL C (nestcl_rt_source) must equal the C path's bit
 * for bit. Exits 77 (skip) for the OpenCL part only when there is no device.
 */
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_dist.h"
#include "nestcl_rt_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_DRAWS 200000
#define SEED 424242u
#define STEP 977u

typedef struct dist_case {
  const char *kind;
  double a, b;
  double mean, var, p0; /* p0 < 0: not checked */
} dist_case;

static const dist_case cases[] = {
  {"uniform", 2.0, 5.0, 3.5, 0.75, -1.0},
  {"normal", 1.0, 2.0, 1.0, 4.0, -1.0},
  {"lognormal", 0.0, 0.5, 1.1331484530668263, 0.36552929362820985, -1.0},
  {"exponential", 2.0, 0.0, 0.5, 0.25, -1.0},
  {"poisson", 0.3, 0.0, 0.3, 0.3, 0.74081822068171788},
  {"poisson", 7.0, 0.0, 7.0, 7.0, 9.1188196555451624e-4},
  {"poisson", 120.0, 0.0, 120.0, 120.0, -1.0},
  {"gamma", 1.0, 1.0, 1.0, 1.0, -1.0},
  {"gamma", 3.0, 0.5, 1.5, 0.75, -1.0},
  {"gamma", 0.5, 2.0, 1.0, 2.0, -1.0},
  {"binomial", 10.0, 0.3, 3.0, 2.1, 0.0282475249},
  {"binomial", 1000.0, 0.7, 700.0, 210.0, -1.0},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))

/* Draw i of case c, as translated models call it (site = c). */
static double draw(int c, uint64_t i)
{
  const dist_case *d = &cases[c];
  const uint32_t site = (uint32_t)c;
  if (!strcmp(d->kind, "uniform"))
    return nestcl_draw_uniform(SEED, site, i, STEP, d->a, d->b);
  if (!strcmp(d->kind, "normal"))
    return nestcl_draw_normal(SEED, site, i, STEP, d->a, d->b);
  if (!strcmp(d->kind, "lognormal"))
    return nestcl_draw_lognormal(SEED, site, i, STEP, d->a, d->b);
  if (!strcmp(d->kind, "exponential"))
    return nestcl_draw_exponential(SEED, site, i, STEP, d->a);
  if (!strcmp(d->kind, "poisson"))
    return (double)nestcl_draw_poisson(SEED, site, i, STEP, d->a);
  if (!strcmp(d->kind, "gamma"))
    return nestcl_draw_gamma(SEED, site, i, STEP, d->a, d->b);
  return (double)nestcl_draw_binomial(SEED, site, i, STEP, (nestcl_u64)d->a, d->b);
}

static void test_moments(double *all)
{
  for (int c = 0; c < N_CASES; ++c) {
    const dist_case *d = &cases[c];
    double sum = 0.0, zeros = 0.0;
    for (uint64_t i = 0; i < N_DRAWS; ++i) {
      const double x = draw(c, i);
      all[(size_t)c * N_DRAWS + i] = x;
      sum += x;
      zeros += x == 0.0;
    }
    const double mean = sum / N_DRAWS;
    double ss = 0.0, m4 = 0.0;
    for (uint64_t i = 0; i < N_DRAWS; ++i) {
      const double e = all[(size_t)c * N_DRAWS + i] - mean;
      ss += e * e;
      m4 += e * e * e * e;
    }
    const double var = ss / (N_DRAWS - 1);
    const double se_mean = sqrt(d->var / N_DRAWS);
    /* the variance estimator's standard error from the sample's fourth moment */
    const double se_var = sqrt(fabs(m4 / N_DRAWS - var * var) / N_DRAWS);
    printf("%-11s (%g, %g): mean %.5f (want %.5f), variance %.5f (want %.5f)", d->kind, d->a, d->b, mean, d->mean, var,
           d->var);
    CHECK(fabs(mean - d->mean) < 5.0 * se_mean, "%s(%g, %g): mean %.6f, want %.6f +- %.6f", d->kind, d->a, d->b, mean,
          d->mean, 5.0 * se_mean);
    CHECK(fabs(var - d->var) < 5.0 * se_var + 1e-12, "%s(%g, %g): variance %.6f, want %.6f +- %.6f", d->kind, d->a,
          d->b, var, d->var, 5.0 * se_var);
    if (d->p0 >= 0.0) {
      const double p = zeros / N_DRAWS, se = sqrt(d->p0 * (1.0 - d->p0) / N_DRAWS);
      printf(", P(0) %.5f (want %.5f)", p, d->p0);
      CHECK(fabs(p - d->p0) < 5.0 * se + 1e-9, "%s(%g, %g): P(0) %.6f, want %.6f", d->kind, d->a, d->b, p, d->p0);
    }
    printf("\n");
  }
  /* Partition independence: a draw depends on (seed, site, id, step) only. */
  CHECK(draw(5, 12345) == draw(5, 12345) && draw(5, 12345) != draw(5, 12346) + 1e300, "draws are not repeatable");
  CHECK(nestcl_draw_poisson(SEED, 0, 7, STEP, 0.0) == 0 && nestcl_draw_poisson(SEED, 0, 7, STEP, -1.0) == 0,
        "poisson of a mean <= 0 is not 0");
  CHECK(nestcl_draw_binomial(SEED, 0, 7, STEP, 5, 1.0) == 5 && nestcl_draw_binomial(SEED, 0, 7, STEP, 5, 0.0) == 0,
        "binomial with p 0 or 1");
}

static const char *kernel_text = "__kernel void t_dist(uint site, __global const double *ab, __global double *out) {\n"
                                 "  const ulong i = get_global_id(0);\n"
                                 "  const double a = ab[0], b = ab[1];\n"
                                 "  const uint kind = (uint)ab[2];\n"
                                 "  double x;\n"
                                 "  if (kind == 0) x = nestcl_draw_uniform(424242u, site, i, 977u, a, b);\n"
                                 "  else if (kind == 1) x = nestcl_draw_normal(424242u, site, i, 977u, a, b);\n"
                                 "  else if (kind == 2) x = nestcl_draw_lognormal(424242u, site, i, 977u, a, b);\n"
                                 "  else if (kind == 3) x = nestcl_draw_exponential(424242u, site, i, 977u, a);\n"
                                 "  else if (kind == 4) x = (double)nestcl_draw_poisson(424242u, site, i, 977u, a);\n"
                                 "  else if (kind == 5) x = nestcl_draw_gamma(424242u, site, i, 977u, a, b);\n"
                                 "  else x = (double)nestcl_draw_binomial(424242u, site, i, 977u, (ulong)a, b);\n"
                                 "  out[i] = x;\n"
                                 "}\n";

static int kind_code(const char *k)
{
  static const char *const kinds[] = {"uniform", "normal", "lognormal", "exponential", "poisson", "gamma", "binomial"};
  for (int j = 0; j < 7; ++j)
    if (!strcmp(kinds[j], k))
      return j;
  return 6;
}

static int test_opencl(const double *all)
{
  nestcl_device *dev = NULL;
  int rc = nestcl_device_open(NULL, 1, &dev);
  if (rc == NESTCL_ENODEV) {
    printf("skipped: no OpenCL device (%s): the C-against-OpenCL part\n", nestcl_last_error());
    return 77;
  }
  CHECK(rc == 0, "nestcl_device_open: %s", nestcl_last_error());
  if (rc)
    return 1;
  cl_int err;
  cl_context ctx = nestcl_device_context(dev);
  size_t len = strlen(nestcl_rt_source) + strlen(kernel_text) + 1;
  char *src = malloc(len);
  cl_program prog = NULL;
  CHECK(src != NULL, "out of memory");
  if (!src)
    return 1;
  snprintf(src, len, "%s%s", nestcl_rt_source, kernel_text);
  rc = nestcl_program_build(dev, src, "", &prog);
  free(src);
  CHECK(rc == 0, "building nestcl_dist.h as OpenCL: %s", nestcl_last_error());
  if (rc)
    return 1;
  cl_kernel k = clCreateKernel(prog, "t_dist", &err);
  CHECK(err == CL_SUCCESS, "kernel");
  if (err != CL_SUCCESS)
    return 1;
  cl_command_queue q = nestcl_device_queue(dev, 0);
  double *out = malloc(sizeof(double) * N_DRAWS);
  CHECK(out != NULL, "out of memory");
  cl_mem bab = clCreateBuffer(ctx, CL_MEM_READ_ONLY, 3 * sizeof(double), NULL, &err);
  cl_mem bout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(double) * N_DRAWS, NULL, &err);
  CHECK(err == CL_SUCCESS, "buffers");
  if (err != CL_SUCCESS)
    return 1;
  for (int c = 0; c < N_CASES; ++c) {
    const double ab[3] = {cases[c].a, cases[c].b, (double)kind_code(cases[c].kind)};
    const cl_uint site = (cl_uint)c;
    size_t global = N_DRAWS;
    CHECK(clEnqueueWriteBuffer(q, bab, CL_TRUE, 0, sizeof ab, ab, 0, NULL, NULL) == CL_SUCCESS, "write");
    clSetKernelArg(k, 0, sizeof site, &site);
    clSetKernelArg(k, 1, sizeof bab, &bab);
    clSetKernelArg(k, 2, sizeof bout, &bout);
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS, "run");
    CHECK(clEnqueueReadBuffer(q, bout, CL_TRUE, 0, sizeof(double) * N_DRAWS, out, 0, NULL, NULL) == CL_SUCCESS, "read");
    const double *want = all + (size_t)c * N_DRAWS;
    if (memcmp(out, want, sizeof(double) * N_DRAWS) != 0) {
      for (size_t i = 0; i < N_DRAWS; ++i)
        if (memcmp(&out[i], &want[i], sizeof(double))) {
          fprintf(stderr, "%s(%g, %g)[%zu]: device %a, C %a\n", cases[c].kind, cases[c].a, cases[c].b, i, out[i],
                  want[i]);
          break;
        }
      CHECK(0, "%s(%g, %g): the device's draws differ from the C path's", cases[c].kind, cases[c].a, cases[c].b);
    }
    printf("%-11s (%g, %g): %d draws bit-identical on C and OpenCL\n", cases[c].kind, cases[c].a, cases[c].b, N_DRAWS);
  }
  clReleaseMemObject(bab);
  clReleaseMemObject(bout);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  free(out);
  nestcl_device_close(dev);
  return 0;
}

int main(int argc, char **argv)
{
  double *all = malloc(sizeof(double) * (size_t)N_CASES * N_DRAWS);
  CHECK(all != NULL, "out of memory");
  test_moments(all);
  int rc = (argc > 1 && !strcmp(argv[1], "--no-opencl")) ? 0 : test_opencl(all);
  free(all);
  return check_report() ? 1 : rc;
}
