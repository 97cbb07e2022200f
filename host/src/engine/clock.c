/*
 * The engine's clock arithmetic: wall time for its statistics, and NEST's
 * conversions between milliseconds, tics (1000 per ms) and steps of the
 * resolution. It depends on no other engine file, so that the description
 * (api.c), the build, the cycle and the synapses share one rounding.
 */
#include <math.h>
#include <time.h>

#include "engine_internal.h"
#include "core/nestcl_core.h"
#include "core/nestcl_connect.h"

double eng_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t eng_tics_per_step(double h)
{
  return llround(h * 1000.0); /* NEST's Time: 1000 tics per ms */
}

int64_t eng_ms_to_steps(double ms, double h)
{
  /* NEST: ms -> tics (1000 per ms, rounded to nearest) -> steps of tics_per_step, rounded to nearest. */
  int64_t tics = llround(ms * 1000.0);
  int64_t tps = eng_tics_per_step(h);
  if (tps <= 0) {
    return 0;
  }
  return tics >= 0 ? (tics + tps / 2) / tps : -((-tics + tps / 2) / tps);
}

int64_t eng_delay_ms_to_steps(double ms, double h)
{
  /* NEST's Time::delay_ms_to_steps (nestcl_connect.h: the device's connection draws round the same way). */
  return nestcl_conn_delay_steps(ms, eng_tics_per_step(h));
}

/* A step's start and a delay in ms as NEST's Time computes them (1000 tics per ms). */
double eng_step_ms(const nestcl_engine *e, int64_t step)
{
  return nestcl_step_ms(step, eng_tics_per_step(e->desc.cfg.resolution_ms), 1.0 / 1000.0);
}

double eng_delay_ms(const nestcl_engine *e, int64_t steps)
{
  return (double)steps * ((double)eng_tics_per_step(e->desc.cfg.resolution_ms) / 1000.0);
}

/*
 * The lags [*f, *t) of [from, to) at which the drive is active (NEST's
 * generators: start < s h <= stop for step s = origin + lag); 0 when none.
 */
int eng_drive_window(const eng_drive *d, int64_t origin, int from, int to, int *f, int *t)
{
  int64_t lo = d->start_step + 1 - origin, hi = d->stop_step == INT64_MAX ? to : d->stop_step + 1 - origin;
  *f = lo > from ? (int)(lo < to ? lo : to) : from;
  *t = hi < to ? (int)(hi > from ? hi : from) : to;
  return *f < *t;
}
