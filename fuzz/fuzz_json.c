/*
 * libFuzzer target: the JSON readers of the perfmodel — pmj_parse (results
 * JSON and the sweep's JSON lines) with its path queries, and
 * nestcl_pm_profile_load (a fitted profile, read from a file). Anything but a
 * crash, a sanitizer report, a hang or a leak is fine; a document the readers
 * accept must also answer the queries the CLI makes of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nestcl/pm_json.h"
#include "nestcl/pm_model.h"

static char path[256];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char err[256];
  err[0] = 0;
  pmj *v = pmj_parse((const char *)data, size, err, sizeof err);
  if (v) {
    int ok = 1;
    (void)pmj_number(v, "simulation.sim_wall_s", &ok);
    (void)pmj_number(v, "config.simtime_ms", &ok);
    (void)pmj_string(v, "benchmark");
    (void)pmj_path(v, "simulation.vps");
    (void)pmj_get(v, "schema");
    pmj_free(v);
  } else if (!err[0]) {
    fprintf(stderr, "pmj_parse refused a document without saying why\n");
    abort();
  }
  if (!path[0]) {
    snprintf(path, sizeof path, "%s/nestcl-fuzz-profile.%ld.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
  }
  FILE *f = fopen(path, "wb");
  if (!f)
    abort();
  fwrite(data, 1, size, f);
  fclose(f);
  nestcl_pm_profile prof;
  (void)nestcl_pm_profile_load(path, NULL, NULL, &prof);
  remove(path);
  return 0;
}
