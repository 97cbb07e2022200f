/*
 * kernels_templates/nestcl_rkf45.h compiled as OpenCL C against the same
 * header compiled as C: every system of rkf45_systems.h (embedded after
 * nestcl_rt_source, as a translated model's kernel would be) for 64 neurons
 * with different parameters and inputs over 1000-2000 time steps, one
 * work-item per neuron, with both controls, both instantiations of the
 * template (DIM 8 and the 5-equation iaf one) and the failure paths (a
 * failing dynamics, the blow-up). Per neuron the fingerprint of y and h after
 * every time step, the final y and h, the step counts and the status must be
 * equal bit for bit to the C path (test_numeric_rkf45 shows that the C path
 * is GSL's). Runs with the default build options and with -cl-opt-disable.
 * Exits 77 (skip) when there is no OpenCL device.
 */
#define NESTCL_CHECK_FATAL
#include "nestcl/device.h"
#include "nestcl_check.h"
#include "nestcl_libm.h"
#include "nestcl_rkf45.h"
#include "nestcl_rt_source.h"
#include "rkf45_systems.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEURONS 64

extern const char rkf45_systems_source[]; /* rkf45_systems.h, embedded by numeric.cmake */

static const char *kernel_text =
  "__kernel void rkf45_run(int kind, int use_yp, double eps_abs, double eps_rel, int fused, int steps,\n"
  "                        int fail_at, int use_iaf, __global ulong *u64, __global double *f64,\n"
  "                        __global int *i32) {\n"
  "  const uint i = get_global_id(0);\n"
  "  sys_result r;\n"
  "  sys_run_neuron(kind, i, use_yp, eps_abs, eps_rel, fused, steps, fail_at, use_iaf, &r);\n"
  "  u64[4 * i] = r.hash; u64[4 * i + 1] = r.count; u64[4 * i + 2] = r.failed_steps;\n"
  "  u64[4 * i + 3] = r.forced_steps;\n"
  "  for (int k = 0; k < SYS_DIM; ++k) f64[(SYS_DIM + 1) * i + k] = r.y[k];\n"
  "  f64[(SYS_DIM + 1) * i + SYS_DIM] = r.h;\n"
  "  i32[4 * i] = r.status; i32[4 * i + 1] = r.spikes; i32[4 * i + 2] = r.steps_done; i32[4 * i + 3] = r.evals;\n"
  "}\n";

typedef struct run {
  int kind, use_yp;
  double eps_abs, eps_rel;
  int steps, fail_at, use_iaf;
} run;

static const run runs[] = {
  {SYS_IAF, 0, 1e-3, 0.0, 2000, 0, 0},   {SYS_IAF, 0, 1e-3, 0.0, 2000, 0, 1},  {SYS_IAF, 1, 1e-6, 1e-6, 1000, 0, 0},
  {SYS_AEIF, 1, 1e-6, 1e-6, 2000, 0, 0}, {SYS_AEIF, 0, 1e-3, 0.0, 1000, 0, 0}, {SYS_HH, 0, 1e-3, 0.0, 2000, 0, 0},
  {SYS_HH, 1, 1e-4, 1e-4, 1000, 0, 0},   {SYS_STIFF, 0, 1e-3, 0.0, 300, 0, 0}, {SYS_STIFF, 1, 1e-6, 1e-6, 150, 0, 0},
  {SYS_JUMP, 0, 1e-3, 0.0, 20, 0, 0},    {SYS_BLOWUP, 0, 1e-3, 0.0, 20, 0, 0}, {SYS_HH, 0, 1e-3, 0.0, 100, 1000, 0},
  {SYS_STIFF, 0, 1e-3, 0.0, 100, 37, 0},
};

static nestcl_device *dev;

/*
 * Under NESTCL_TEST_DIVISOR (a device simulator, tests/oclgrind) a run takes a
 * share of its time steps, 20 at least, but all of them where it must end in
 * a failure; the stiff, jump and blow-up systems, whose hundreds of
 * thousands of tiny RKF45 steps a simulator cannot afford, stay out (their
 * code path is the same), and so does the second build, -cl-opt-disable.
 */
static int run_steps(const run *rn)
{
  if (rn->fail_at || rn->kind == SYS_BLOWUP)
    return rn->steps;
  const int n = (int)nestcl_test_size((size_t)rn->steps);
  return n >= 20 || n >= rn->steps ? n : (rn->steps < 20 ? rn->steps : 20);
}
static int run_selected(const run *rn)
{
  return nestcl_test_divisor() == 1 || (rn->kind != SYS_STIFF && rn->kind != SYS_JUMP && rn->kind != SYS_BLOWUP);
}

/* One run on the device with program prog against C: the number of neurons that differ. */
static int compare_run(cl_program prog, const run *rn, cl_int fused, unsigned long *work)
{
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "rkf45_run", &err);
  CHECK(err == CL_SUCCESS, "clCreateKernel");
  const size_t n = NEURONS, nu = 4 * n, nf = (SYS_DIM + 1) * n, ni = 4 * n;
  nestcl_buffer bu, bf, bi;
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "u64", nu * 8, CL_MEM_WRITE_ONLY, NULL, &bu) == 0, "buffer");
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "f64", nf * 8, CL_MEM_WRITE_ONLY, NULL, &bf) == 0, "buffer");
  CHECK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "i32", ni * 4, CL_MEM_WRITE_ONLY, NULL, &bi) == 0, "buffer");
  const cl_int kind = rn->kind, use_yp = rn->use_yp, steps = run_steps(rn), fail_at = rn->fail_at,
               use_iaf = rn->use_iaf;
  err = clSetKernelArg(k, 0, sizeof kind, &kind);
  err |= clSetKernelArg(k, 1, sizeof use_yp, &use_yp);
  err |= clSetKernelArg(k, 2, sizeof(double), &rn->eps_abs);
  err |= clSetKernelArg(k, 3, sizeof(double), &rn->eps_rel);
  err |= clSetKernelArg(k, 4, sizeof fused, &fused);
  err |= clSetKernelArg(k, 5, sizeof steps, &steps);
  err |= clSetKernelArg(k, 6, sizeof fail_at, &fail_at);
  err |= clSetKernelArg(k, 7, sizeof use_iaf, &use_iaf);
  err |= clSetKernelArg(k, 8, sizeof(cl_mem), &bu.mem);
  err |= clSetKernelArg(k, 9, sizeof(cl_mem), &bf.mem);
  err |= clSetKernelArg(k, 10, sizeof(cl_mem), &bi.mem);
  CHECK(err == CL_SUCCESS, "kernel arguments");
  cl_ulong *u = malloc(nu * 8);
  double *f = malloc(nf * 8);
  cl_int *iv = malloc(ni * 4);
  CHECK(u && f && iv, "out of memory");
  cl_command_queue q = nestcl_device_queue(dev, 0);
  err = clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  err |= clEnqueueReadBuffer(q, bu.mem, CL_TRUE, 0, nu * 8, u, 0, NULL, NULL);
  err |= clEnqueueReadBuffer(q, bf.mem, CL_TRUE, 0, nf * 8, f, 0, NULL, NULL);
  err |= clEnqueueReadBuffer(q, bi.mem, CL_TRUE, 0, ni * 4, iv, 0, NULL, NULL);
  CHECK(err == CL_SUCCESS, "running the kernel");
  int diff = 0;
  for (size_t i = 0; i < n; ++i) {
    sys_result r;
    sys_run_neuron(rn->kind, (nestcl_u32)i, rn->use_yp, rn->eps_abs, rn->eps_rel, fused, run_steps(rn), rn->fail_at,
                   rn->use_iaf, &r);
    const cl_ulong cu[4] = {r.hash, r.count, r.failed_steps, r.forced_steps};
    const cl_int ci[4] = {r.status, r.spikes, r.steps_done, r.evals};
    const int same = memcmp(cu, u + 4 * i, sizeof cu) == 0 && memcmp(r.y, f + (SYS_DIM + 1) * i, SYS_DIM * 8) == 0 &&
      memcmp(&r.h, f + (SYS_DIM + 1) * i + SYS_DIM, 8) == 0 && memcmp(ci, iv + 4 * i, sizeof ci) == 0;
    if (!same && diff++ < 3)
      fprintf(stderr,
              "kind %d neuron %zu: device hash %llx count %llu status %d y0 %a h %a; C hash %llx count %llu "
              "status %d y0 %a h %a\n",
              rn->kind, i, (unsigned long long)u[4 * i], (unsigned long long)u[4 * i + 1], iv[4 * i],
              f[(SYS_DIM + 1) * i], f[(SYS_DIM + 1) * i + SYS_DIM], (unsigned long long)r.hash,
              (unsigned long long)r.count, r.status, r.y[0], r.h);
    *work += r.count;
    if (rn->fail_at)
      CHECK(r.status == 9, "kind %d: the failing dynamics' status, got %d", rn->kind, r.status);
    if (rn->kind == SYS_BLOWUP)
      CHECK(r.status == NESTCL_RKF45_ENONFINITE, "the blow-up: status %d", r.status);
  }
  free(u);
  free(f);
  free(iv);
  nestcl_buffer_free(dev, &bu);
  nestcl_buffer_free(dev, &bf);
  nestcl_buffer_free(dev, &bi);
  clReleaseKernel(k);
  return diff;
}

int main(void)
{
  if (nestcl_device_open(NULL, 1, &dev) != 0) {
    printf("no OpenCL device (%s): skipped\n", nestcl_last_error());
    return 77;
  }
  const int host = nestcl_libm_exp_fused();
  const size_t len = strlen(nestcl_rt_source) + strlen(rkf45_systems_source) + strlen(kernel_text) + 3;
  char *src = malloc(len);
  CHECK(src != NULL, "out of memory");
  snprintf(src, len, "%s\n%s\n%s", nestcl_rt_source, rkf45_systems_source, kernel_text);
  static const char *options[2] = {"", "-cl-opt-disable"};
  int bad = 0;
  for (int o = 0; o < (nestcl_test_divisor() == 1 ? 2 : 1); ++o) {
    cl_program prog;
    CHECK(nestcl_program_build(dev, src, options[o], &prog) == 0, "build: %s", nestcl_last_error());
    /* both libm variants on the device against C (C runs the emulation for the one the host lacks) */
    for (cl_int fused = 0; fused <= 1; ++fused) {
      if (o == 1 && fused != (host > 0))
        continue; /* -cl-opt-disable is slow: the host's variant only */
      for (size_t r = 0; r < sizeof runs / sizeof *runs; ++r) {
        if (!run_selected(&runs[r]))
          continue;
        unsigned long work = 0;
        const int d = compare_run(prog, &runs[r], fused, &work);
        printf("%s%s, kind %d %s(%g, %g) %d steps%s%s: %d of %d neurons differ from C (%lu RKF45 steps)\n",
               o ? "-cl-opt-disable " : "", fused ? "fused" : "plain", runs[r].kind, runs[r].use_yp ? "yp" : "y",
               runs[r].eps_abs, runs[r].eps_rel, run_steps(&runs[r]), runs[r].use_iaf ? " (iaf instantiation)" : "",
               runs[r].fail_at ? " (failing dynamics)" : "", d, NEURONS, work);
        bad += d != 0;
      }
    }
    clReleaseProgram(prog);
  }
  free(src);
  printf("device: %s\n", nestcl_device_get_info(dev)->device_name);
  nestcl_device_close(dev);
  if (bad) {
    fprintf(stderr, "FAIL: %d run(s) differ\n", bad);
    return 1;
  }
  return 0;
}
