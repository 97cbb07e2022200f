/*
 * NEST's hpc_benchmark network (pynest/examples/hpc_benchmark.py; parameters
 * in BENCHMARKS.md), described on the engine through its public API. The
 * driver (hpc_benchmark_driver.c) adds what only this benchmark has: the
 * performance model's split, rebalancing, the E->E weights in the results.
 */
#ifndef NESTCL_BENCH_HPC_H
#define NESTCL_BENCH_HPC_H

#include <stdint.h>

#include "nestcl/engine.h"

typedef struct hpc_network {
  /* the script's parameters */
  double tau_syn, tau_m, C_m, V_th, g, eta, J_E_mV;
  uint32_t NE, NI, CE, CI;
  /* derived: the alpha PSP's peak (J_E in pA), the Poisson rate */
  double t_max, v_max, JE, JI, nu_th, p_rate;
  /* engine handles: E and I populations, the E->E projection */
  int pe, pi, ee;
} hpc_network;

/* The parameters at scale S (NE = 9000 S, NI = 2250 S) and in-degree scale K (CE = 9000 K, CI = 2250 K; NEST's
   benchmark: 1) and the derived values; engine status codes. */
int hpc_parameters(double scale, double k_scale, hpc_network *n);

/*
 * Creates, sets and connects the network on e: model (iaf_psc_alpha), one
 * delay for every connection, E->E static or NEST's stdp_pl_synapse_hom.
 */
int hpc_describe(nestcl_engine *e, const char *model, double delay_ms, int ee_static, hpc_network *n);

/* `nestcl run hpc_benchmark` (hpc_benchmark_driver.c): its own driver, for the performance model's split. */
int cli_run_hpc_benchmark(int argc, char **argv);

#endif
