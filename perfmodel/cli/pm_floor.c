/*
 * `nestcl perfmodel floor RESULTS.json [--launch-us U] [--wait-us W]`: the
 * real-time factor below which no device can take a run's loop, whatever its
 * kernels cost. On a GPU every kernel launch costs some microseconds and every
 * wait for the device some tens, so a loop of L launches and W waits per
 * super step, S super steps per simulated second, spends at least
 * S (L U + W W_us) microseconds per simulated second (issue 29). L and W come
 * from the results' counters (simulation.enqueued, the streams summed), which
 * do not depend on the device: a PoCL run gives a GPU run's floor. Where the
 * results carry the kernels timed (simulation.kernels, issue 41), it also
 * gives what they cost per super step on the device that ran them, and the
 * idle time between them: the launches' and waits' bound beside the
 * kernels' own. Prints one JSON object; exit 2 for bad flags, 1 for a
 * results file without counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "nestcl/pm_json.h"
#include "pm_floor.h"
#include "run_common.h"

static void floor_usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl perfmodel floor RESULTS.json [--launch-us U] [--wait-us W]\n"
          "\n"
          "The real-time factor that the kernel launches and waits for the device of the run in\n"
          "RESULTS.json (nestcl run ... --out, with streams) impose at U microseconds per launch\n"
          "(default 5) and W per wait (default 20), however fast the kernels.\n");
}

/*
 * "kernels": per kernel of simulation.kernels, launches and device time per
 * super step; the device's busy time and the idle time between kernels per
 * simulated second (null when the results have no kernel table).
 */
static void floor_kernels(json *j, const pmj *r, double steps, double per_s)
{
  const pmj *k = pmj_path(r, "simulation.kernels");
  const pmj *t = k ? pmj_get(k, "table") : NULL;
  json_key(j, "kernels");
  if (!t || t->type != PMJ_ARRAY) {
    json_null(j);
    return;
  }
  json_begin_object(j);
  json_key(j, "table");
  json_begin_array(j);
  double busy = 0.0;
  for (size_t i = 0; i < t->n; ++i) {
    const pmj *e = &t->items[i];
    int ok = 1;
    const char *name = pmj_string(e, "name");
    double launches = pmj_number(e, "launches", &ok), us = pmj_number(e, "device_us_per_launch", &ok);
    if (!ok || !name) {
      continue;
    }
    busy += launches * us;
    json_begin_object(j);
    json_key(j, "name");
    json_string(j, name);
    json_key(j, "launches_per_super_step");
    json_number(j, launches / steps);
    json_key(j, "device_us_per_launch");
    json_number(j, us);
    json_key(j, "device_us_per_super_step");
    json_number(j, launches * us / steps);
    json_end_object(j);
  }
  json_end_array(j);
  int ok = 1;
  double gap_us = pmj_number(r, "simulation.kernels.idle.us_per_gap", &ok);
  json_key(j, "device_busy_us_per_super_step");
  json_number(j, busy / steps);
  json_key(j, "device_busy_s_per_simulated_s");
  json_number(j, busy * 1e-6 / steps * per_s);
  json_key(j, "idle_us_per_gap");
  if (ok)
    json_number(j, gap_us);
  else
    json_null(j);
  json_end_object(j);
}

int pm_floor(int argc, char **argv)
{
  const char *path = NULL;
  double launch_us = 5.0, wait_us = 20.0;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
      floor_usage(stdout);
      return CLI_OK;
    } else if (strcmp(argv[a], "--launch-us") == 0 || strcmp(argv[a], "--wait-us") == 0) {
      double *v = argv[a][2] == 'l' ? &launch_us : &wait_us;
      if (cli_parse_double(argv[a], a + 1 < argc ? argv[a + 1] : NULL, v))
        return CLI_USAGE;
      if (*v < 0.0) {
        fprintf(stderr, "error: %s must not be negative (got %g)\n", argv[a], *v);
        return CLI_USAGE;
      }
      ++a;
    } else if (argv[a][0] == '-' || path) {
      fprintf(stderr, "error: perfmodel floor: unexpected '%s' (see --help)\n", argv[a]);
      return CLI_USAGE;
    } else {
      path = argv[a];
    }
  }
  if (!path) {
    fprintf(stderr, "error: perfmodel floor needs a results file (nestcl run ... --out FILE)\n");
    return CLI_USAGE;
  }
  char err[512];
  pmj *r = pmj_parse_file(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "error: %s: %s\n", path, err);
    return CLI_RUNTIME;
  }
  int ok = 1;
  double simtime = pmj_number(r, "config.simtime_ms", &ok);
  double steps = pmj_number(r, "simulation.enqueued.super_steps", &ok);
  double launches = pmj_number(r, "simulation.enqueued.launches", &ok);
  double waits = pmj_number(r, "simulation.enqueued.waits", &ok);
  /* A replayed super step (cl_khr_command_buffer) is one enqueue: it costs as a launch does. */
  int has_replays = 1;
  double replays = pmj_number(r, "simulation.enqueued.replays", &has_replays);
  if (!has_replays || !(replays >= 0.0)) {
    replays = 0.0;
  }
  const char *bench = pmj_string(r, "benchmark");
  if (!ok || !(simtime > 0.0) || !(steps > 0.0)) {
    fprintf(stderr,
            "error: %s has no enqueue counters of a measured part (simulation.enqueued, "
            "config.simtime_ms > 0): a results file of this version's nestcl run\n",
            path);
    pmj_free(r);
    return CLI_RUNTIME;
  }
  const double per_s = steps / (simtime * 1e-3), l = (launches + replays) / steps, w = waits / steps;
  const double floor_s = per_s * (l * launch_us + w * wait_us) * 1e-6;
  json j;
  json_init(&j);
  json_begin_object(&j);
  json_key(&j, "schema");
  json_string(&j, "nestcl-perfmodel-floor/1");
  json_key(&j, "benchmark");
  json_string(&j, bench ? bench : "");
  json_key(&j, "launch_us");
  json_number(&j, launch_us);
  json_key(&j, "wait_us");
  json_number(&j, wait_us);
  json_key(&j, "super_steps_per_simulated_s");
  json_number(&j, per_s);
  json_key(&j, "launches_per_super_step");
  json_number(&j, l);
  json_key(&j, "replays_per_super_step");
  json_number(&j, replays / steps);
  json_key(&j, "waits_per_super_step");
  json_number(&j, w);
  json_key(&j, "launch_s_per_simulated_s");
  json_number(&j, per_s * l * launch_us * 1e-6);
  json_key(&j, "wait_s_per_simulated_s");
  json_number(&j, per_s * w * wait_us * 1e-6);
  json_key(&j, "real_time_factor_floor");
  json_number(&j, floor_s);
  floor_kernels(&j, r, steps, per_s);
  json_end_object(&j);
  pmj_free(r);
  int code = CLI_OK;
  if (j.failed) {
    fprintf(stderr, "error: out of host memory\n");
    code = CLI_RUNTIME;
  } else {
    fwrite(j.buf, 1, j.len, stdout);
    fputc('\n', stdout);
  }
  json_free(&j);
  return code;
}
