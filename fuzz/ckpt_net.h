/*
 * The network of the checkpoint fuzz target and of its seed writer: 120
 * translated iaf_psc_alpha neurons (E and I), fixed in-degree, normal delays
 * (per-synapse), E->E stdp_synapse (plastic state, per-source state, spike
 * histories), Poisson drive: every section of the format (NEUR, RING, HIST,
 * CSRS, PLAS, PSRC).
 */
#ifndef NESTCL_FUZZ_CKPT_NET_H
#define NESTCL_FUZZ_CKPT_NET_H

#include <math.h>

#include "nestcl/engine.h"
#include "nestcl/model.h"

static int ckpt_net(nestcl_engine **out)
{
  nestcl_engine_config c;
  nestcl_engine_config_defaults(&c);
  c.cpu_threads = 1;
  c.gpu_streams = 0;
  c.gpu_fraction = 0.0;
  c.seed = 4242;
  nestcl_engine *e = NULL;
  int rc = nestcl_engine_create(&c, &e);
  int pe, pi, proj;
  if (!rc)
    rc = nestcl_engine_set_models(e, nestcl_builtin_models, nestcl_builtin_model_count);
  if (!rc)
    rc = nestcl_engine_set_synapse_models(e, nestcl_builtin_synapses, nestcl_builtin_synapse_count);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", 96, 0, &pe);
  if (!rc)
    rc = nestcl_engine_create_population(e, "iaf_psc_alpha", 24, 0, &pi);
  if (!rc)
    rc = nestcl_engine_set(e, pe, "tau_minus", nestcl_constant(30.0));
  nestcl_value d = nestcl_normal_clipped(1.5, 0.5, 0.5, INFINITY);
  nestcl_syn_spec se = {nestcl_constant(60.0), d, 0}, si = {nestcl_constant(-300.0), d, 0};
  nestcl_conn_spec fin = {NESTCL_RULE_FIXED_INDEGREE, 10, 1, 1, 0, 0.0};
  const nestcl_syn_param p[] = {{"lambda", 0.05}, {"Wmax", 120.0}};
  if (!rc)
    rc = nestcl_engine_connect_synapse(e, pe, pe, &fin, &se, "stdp_synapse", p, 2, &proj);
  if (!rc)
    rc = nestcl_engine_connect(e, pe, pi, &fin, &se);
  if (!rc)
    rc = nestcl_engine_connect(e, pi, pe, &fin, &si);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pe, 15000.0, 60.0, 1.0, 0);
  if (!rc)
    rc = nestcl_engine_add_poisson(e, pi, 15000.0, 60.0, 1.0, 0);
  if (rc) {
    nestcl_engine_destroy(e);
    return rc;
  }
  *out = e;
  return 0;
}

#endif
