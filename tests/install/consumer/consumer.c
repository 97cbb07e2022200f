/*
 * A program outside nestcl's tree, built against an installed nestcl (through
 * find_package(nestcl) or pkg-config): two populations of the installed
 * translated iaf_psc_alpha, E and I, with fixed in-degree static synapses and
 * Poisson drive, simulated once on a CPU thread (the C path) and once on one
 * OpenCL stream, through the public API only. The two must give the same
 * spikes, and enough of them that the comparison means something.
 * Exit 0 when they agree, 1 otherwise (message on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/engine.h"
#include "nestcl/version.h"

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    if ((call) != 0) {                                                                                                 \
      fprintf(stderr, "consumer: %s failed: %s\n", #call, nestcl_last_error());                                        \
      return -1;                                                                                                       \
    }                                                                                                                  \
  } while (0)

typedef struct run {
  size_t n;
  uint64_t *gids;
  int64_t *steps;
} run;

static int simulate(int threads, int streams, run *out)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.cpu_threads = threads;
  cfg.gpu_streams = streams;
  cfg.gpu_fraction = streams ? 1.0 : 0.0;
  cfg.seed = 2024;
  nestcl_engine *e;
  CHECK(nestcl_engine_create(&cfg, &e));
  CHECK(nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count));
  int ex, in, rec;
  CHECK(nestcl_engine_create_population(e, "iaf_psc_alpha", 400, 0, &ex));
  CHECK(nestcl_engine_create_population(e, "iaf_psc_alpha", 100, 0, &in));
  CHECK(nestcl_engine_set(e, ex, "V_m", nestcl_uniform(-70.0, -55.0)));
  CHECK(nestcl_engine_set(e, in, "V_m", nestcl_uniform(-70.0, -55.0)));
  nestcl_conn_spec conn = {NESTCL_RULE_FIXED_INDEGREE, 40, 1, 1, 0, 0.0};
  nestcl_syn_spec exc = {nestcl_constant(10.0), nestcl_constant(1.5), 0};
  nestcl_syn_spec inh = {nestcl_constant(-50.0), nestcl_constant(1.5), 0};
  for (int target = 0; target < 2; ++target) {
    CHECK(nestcl_engine_connect(e, ex, target ? in : ex, &conn, &exc));
    conn.degree = 10;
    CHECK(nestcl_engine_connect(e, in, target ? in : ex, &conn, &inh));
    conn.degree = 40;
    CHECK(nestcl_engine_add_poisson(e, target ? in : ex, 8000.0, 10.0, 1.5, 0));
  }
  CHECK(nestcl_engine_add_spike_recorder(e, ex, 0, 400, &rec));
  CHECK(nestcl_engine_simulate(e, 200.0));
  const uint64_t *gids;
  const int64_t *steps;
  CHECK(nestcl_engine_spikes(e, rec, &gids, &steps, &out->n));
  out->gids = malloc(out->n * sizeof *gids + 1);
  out->steps = malloc(out->n * sizeof *steps + 1);
  if (!out->gids || !out->steps)
    return -1;
  memcpy(out->gids, gids, out->n * sizeof *gids);
  memcpy(out->steps, steps, out->n * sizeof *steps);
  nestcl_engine_destroy(e);
  return 0;
}

int main(void)
{
  run cpu = {0, NULL, NULL}, device = {0, NULL, NULL};
  printf("consumer: libnestcl %s, %d translated models\n", nestcl_version(), nestcl_builtin_model_count);
  if (simulate(1, 0, &cpu) || simulate(0, 1, &device))
    return 1;
  printf("consumer: C path %zu spikes, OpenCL stream %zu spikes\n", cpu.n, device.n);
  if (cpu.n < 100) {
    fprintf(stderr, "consumer: only %zu spikes in 200 ms; the network should be active\n", cpu.n);
    return 1;
  }
  if (cpu.n != device.n || memcmp(cpu.gids, device.gids, cpu.n * sizeof cpu.gids[0]) ||
      memcmp(cpu.steps, device.steps, cpu.n * sizeof cpu.steps[0])) {
    fprintf(stderr, "consumer: the C path and the OpenCL stream differ\n");
    return 1;
  }
  printf("consumer: identical spikes (%.1f Hz)\n", (double)cpu.n / 400 / 0.2);
  free(cpu.gids), free(cpu.steps), free(device.gids), free(device.steps);
  return 0;
}
