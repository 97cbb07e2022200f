/*
 * test_lif's descriptor (model.h) and host helpers: the engine tests' own
 * neuron, so that the engine is tested without the translator. The update
 * text (test_lif_body.h) is shared by the C loop here and the kernel.
 */
#include <math.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl_ring.h"
#include "test_lif.h"
#include "test_lif_body.h"

enum {
  F_V,
  F_IEX,
  F_IIN,
  F_REFR,
  F_TAU,
  F_C,
  F_TSE,
  F_TSI,
  F_TREF,
  F_VTH,
  F_VRESET,
  F_EL,
  F_IE,
  F_FSTEP,
  F_FCODE,
  F_PM,
  F_PEX,
  F_PIN,
  F_PMI,
  F_REFC,
  F_COUNT
};

static const nestcl_field fields[F_COUNT] = {
  {"V_m_", "State_", "V_m", NESTCL_ROLE_STATE, NESTCL_T_DOUBLE, 0, 0},
  {"I_syn_ex_", "State_", "I_syn_ex", NESTCL_ROLE_STATE, NESTCL_T_DOUBLE, 0, 0},
  {"I_syn_in_", "State_", "I_syn_in", NESTCL_ROLE_STATE, NESTCL_T_DOUBLE, 0, 0},
  {"r_", "State_", NULL, NESTCL_ROLE_STATE, NESTCL_T_INT, 0, 0},
  {"tau_m_", "Parameters_", "tau_m", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"C_m_", "Parameters_", "C_m", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"tau_syn_ex_", "Parameters_", "tau_syn_ex", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"tau_syn_in_", "Parameters_", "tau_syn_in", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"t_ref_", "Parameters_", "t_ref", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"V_th_", "Parameters_", "V_th", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"V_reset_", "Parameters_", "V_reset", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"E_L_", "Parameters_", "E_L", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"I_e_", "Parameters_", "I_e", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"fail_step_", "Parameters_", "fail_step", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"fail_code_", "Parameters_", "fail_code", NESTCL_ROLE_PARAMETER, NESTCL_T_DOUBLE, 0, 0},
  {"P_m_", "Variables_", NULL, NESTCL_ROLE_INTERNAL, NESTCL_T_DOUBLE, 0, 0},
  {"P_ex_", "Variables_", NULL, NESTCL_ROLE_INTERNAL, NESTCL_T_DOUBLE, 0, 0},
  {"P_in_", "Variables_", NULL, NESTCL_ROLE_INTERNAL, NESTCL_T_DOUBLE, 0, 0},
  {"P_mI_", "Variables_", NULL, NESTCL_ROLE_INTERNAL, NESTCL_T_DOUBLE, 0, 0},
  {"ref_counts_", "Variables_", NULL, NESTCL_ROLE_INTERNAL, NESTCL_T_INT, 0, 0},
};

static const nestcl_channel_group channels[] = {
  {"spikes_", "SYN_EX", 1, 0},
  {"spikes_", "SYN_IN", 1, 0},
  {"currents_", "currents_", 1, 1},
};

static const int recordables[] = {F_V, F_IEX};

#define D(f) ((double *)fp[f])
#define I(f) ((int32_t *)fp[f])

static void update_cpu(const nestcl_update_args *a, void *const *fp)
{
  for (uint32_t i = 0; i < a->n; ++i) {
    test_lif_neuron(i, a->n, a->origin_steps, a->from, a->to, a->ring_slots, a->n_channels, a->ring, a->spike_count,
                    a->spikes, a->spike_capacity, a->rec_interval, a->rec, D(F_V), D(F_IEX), D(F_IIN), I(F_REFR),
                    D(F_TAU), D(F_C), D(F_TSE), D(F_TSI), D(F_TREF), D(F_VTH), D(F_VRESET), D(F_EL), D(F_IE),
                    D(F_FSTEP), D(F_FCODE), D(F_PM), D(F_PEX), D(F_PIN), D(F_PMI), I(F_REFC));
  }
}

static void set_defaults(void *const *fp, size_t n, size_t i, uint32_t K)
{
  (void)n;
  (void)K;
  D(F_V)[i] = 0.0;
  D(F_IEX)[i] = 0.0;
  D(F_IIN)[i] = 0.0;
  I(F_REFR)[i] = 0;
  D(F_TAU)[i] = 20.0;
  D(F_C)[i] = 250.0;
  D(F_TSE)[i] = 0.5;
  D(F_TSI)[i] = 0.5;
  D(F_TREF)[i] = 2.0;
  D(F_VTH)[i] = 20.0;
  D(F_VRESET)[i] = 10.0;
  D(F_EL)[i] = 0.0;
  D(F_IE)[i] = 0.0;
  D(F_FSTEP)[i] = -1.0;
  D(F_FCODE)[i] = 1.0;
}

static int pre_run(void *const *fp, size_t n, size_t i, uint32_t K, double h)
{
  (void)n;
  (void)K;
  D(F_PM)[i] = exp(-h / D(F_TAU)[i]);
  D(F_PEX)[i] = exp(-h / D(F_TSE)[i]);
  D(F_PIN)[i] = exp(-h / D(F_TSI)[i]);
  D(F_PMI)[i] = D(F_TAU)[i] / D(F_C)[i] * (1.0 - D(F_PM)[i]);
  I(F_REFC)[i] = (int32_t)llround(D(F_TREF)[i] / h);
  return 0;
}

static int route_spike(double weight, long rport, uint32_t K, int *channel, double *value)
{
  (void)K;
  if (rport != 0) {
    return NESTCL_EINVAL;
  }
  *channel = weight >= 0.0 ? 0 : 1;
  *value = weight;
  return 0;
}

static int route_current(double current, double weight, long rport, uint32_t K, int *channel, double *value)
{
  (void)K;
  if (rport != 0) {
    return NESTCL_EINVAL;
  }
  *channel = 2;
  *value = current * weight;
  return 0;
}

static int find(const char *name)
{
  for (int f = 0; f < F_COUNT; ++f) {
    if (fields[f].nest_name && strcmp(fields[f].nest_name, name) == 0) {
      return f;
    }
  }
  return -1;
}

static int get_status(void *const *fp, size_t n, size_t i, uint32_t K, const char *name, double *value)
{
  (void)n;
  (void)K;
  int f = find(name);
  if (f < 0) {
    return nestcl_set_error(NESTCL_EINVAL, "test_lif: unknown name '%s'", name);
  }
  *value = D(f)[i];
  return 0;
}

static int set_status(void *const *fp, size_t n, size_t i, uint32_t K, const char *name, double value)
{
  (void)n;
  (void)K;
  int f = find(name);
  if (f < 0) {
    return nestcl_set_error(NESTCL_EINVAL, "test_lif: unknown name '%s'", name);
  }
  if ((f == F_TAU || f == F_C || f == F_TSE || f == F_TSI) && !(value > 0.0)) {
    return nestcl_set_error(NESTCL_EINVAL, "test_lif: %s must be positive", name);
  }
  D(f)[i] = value;
  return 0;
}

static const char *const failures[] = {"GSLSolverFailure", "NumericalInstability"};

/* Designated: members model.h adds later are left zero (none). */
const nestcl_model test_lif_model = {
  .name = "test_lif",
  .source_file = "tests/engine/test_lif_body.h",
  .source_hash = "-",
  .fields = fields,
  .n_fields = F_COUNT,
  .channels = channels,
  .n_channel_groups = 3,
  .recordables = recordables,
  .n_recordables = 2,
  .has_receptors = 0,
  .kernel_source = test_lif_kernel_source,
  .kernel_name = "nestcl_update_test_lif",
  .update_cpu = update_cpu,
  .set_defaults = set_defaults,
  .pre_run = pre_run,
  .route_spike = route_spike,
  .route_current = route_current,
  .get_status = get_status,
  .set_status = set_status,
  .init_buffers = NULL,
  .failures = failures,
  .n_failures = 2,
};

const nestcl_model *const test_lif_models[] = {&test_lif_model};
