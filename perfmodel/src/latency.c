/*
 * The latency floor of a configuration (issue 29): a stream's kernel launches
 * and waits for its device per super step cost latency whatever the kernels
 * do (on a discrete GPU about 3-8 us per launch, 10-30 us per wait), so
 * S x (launches L + waits W) per simulated second is a floor under the wall
 * time. The counts follow from the shape of the engine's loop for
 * hpc_benchmark (two populations of one model, a Poisson drive each, E->E
 * plastic or static), as the engine counts them (nestcl_enqueue_counts;
 * checked against the measured counters by perfmodel_predict_floor):
 *   - the device loop (one stream, no threads, one rank): one merged
 *     update, the gather and the end of the super step (delivery and drive):
 *     3 launches; with E->E plastic, 2 more (E's spike history append, the
 *     plastic delivery: resident_plastic.c); it waits to drain once per sync
 *     interval (250 super steps) and at the end of each simulate(). Where the
 *     device offers cl_khr_command_buffer the launches are one replay, which
 *     costs about one launch: the floor here is the one without it;
 *   - one stream beside threads or ranks: the same 3 launches (5 plastic:
 *     the history append and the plastic delivery, launched where there are
 *     spikes) and one wait per super step (its spike list);
 *   - otherwise (several streams): the host clock's loop, per stream update,
 *     drive and delivery per population and the plastic delivery, 5.3
 *     launches and 4.5 waits per super step static, 6.8 and 6.1 plastic
 *     (measured at scale 1 on PoCL, README).
 * The streams of one rank run side by side: the floor is one stream's.
 */
#include "nestcl/pm_model.h"

void nestcl_pm_loop_counts(const nestcl_pm_config *c, double *launches, double *waits)
{
  const int plastic = c->phi > 0.0;
  if (c->TG < 1.0) {
    *launches = *waits = 0.0;
  } else if (c->TG == 1.0 && c->TC == 0.0 && c->M <= 1.0) {
    *launches = plastic ? 5.0 : 3.0;
    *waits = 1.0 / 250.0;
  } else if (c->TG == 1.0) {
    *launches = plastic ? 5.0 : 3.0;
    *waits = 1.0;
  } else {
    *launches = plastic ? 6.8 : 5.3;
    *waits = plastic ? 6.1 : 4.5;
  }
}

double nestcl_pm_latency_floor(const nestcl_pm_config *c, double launch_us, double wait_us)
{
  double l, w;
  nestcl_pm_loop_counts(c, &l, &w);
  return c->S * (l * launch_us + w * wait_us) * 1e-6;
}
