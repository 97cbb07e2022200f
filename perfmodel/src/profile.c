/*
 * Profiles: the fitted model of one device and driver on one host, stored as
 * JSON in the cache folder (nestcl/pm_model.h), or committed to the
 * repository (perfmodel/profiles/, installed as share/nestcl/perfmodel/
 * profiles) for the machines it was fitted on, with the machine and the date
 * in them. Written to a temporary file and renamed, so a reader never sees
 * half a profile; read back strictly (every parameter by name, finite, the
 * schema), since a stale or damaged profile would silently choose a bad split.
 */
#define _GNU_SOURCE /* dladdr: the repository's profiles lie relative to the binary or library */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "nestcl/device.h"
#include "nestcl/pm_json.h"
#include "nestcl/pm_model.h"

#define PROFILE_SCHEMA "nestcl-perfmodel-profile/1"

static int make_dirs(const char *path)
{
  char buf[4096];
  if (strlen(path) >= sizeof buf)
    return -1;
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST)
    return -1;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* A name made file-safe: letters, digits, '.', '-' and '_' kept, runs of anything else one '_'. */
static void safe_name(const char *s, char *out, size_t cap)
{
  size_t n = 0;
  int under = 0;
  for (; s && *s && n + 1 < cap && n < 80; ++s) {
    char c = *s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (ok) {
      out[n++] = c;
      under = 0;
    } else if (!under) {
      out[n++] = '_';
      under = 1;
    }
  }
  out[n] = 0;
}

int nestcl_pm_profile_path(const char *benchmark, const char *device_name, const char *driver, char *out, size_t cap)
{
  const char *env = getenv("NESTCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char dir[3072];
  if (env && strcmp(env, "off") == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: NESTCL_CACHE_DIR=off: no cache folder for profiles");
  }
  if (env && *env) {
    snprintf(dir, sizeof dir, "%s/perfmodel", env);
  } else if (xdg && *xdg) {
    snprintf(dir, sizeof dir, "%s/nestcl/perfmodel", xdg);
  } else if (home && *home) {
    snprintf(dir, sizeof dir, "%s/.cache/nestcl/perfmodel", home);
  } else {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: no cache folder for profiles (set NESTCL_CACHE_DIR or HOME)");
  }
  if (make_dirs(dir) != 0) {
    return nestcl_set_error(NESTCL_EIO, "perfmodel: cannot create the profile folder %s: %s", dir, strerror(errno));
  }
  char name[320];
  int rc = nestcl_pm_profile_name(benchmark, device_name, driver, name, sizeof name);
  if (rc) {
    return rc;
  }
  int n = snprintf(out, cap, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= cap) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: profile path too long");
  }
  return 0;
}

int nestcl_pm_profile_name(const char *benchmark, const char *device_name, const char *driver, char *out, size_t cap)
{
  char b[96], d[96], v[96];
  safe_name(benchmark, b, sizeof b);
  safe_name(device_name, d, sizeof d);
  safe_name(driver, v, sizeof v);
  int n = snprintf(out, cap, "%s--%s--%s.json", b, d, v);
  if (n < 0 || (size_t)n >= cap) {
    return nestcl_set_error(NESTCL_EINVAL, "perfmodel: profile name too long");
  }
  return 0;
}

/* The CPU's model name from /proc/cpuinfo (x86's "model name", else the first of "Hardware" or "CPU part"). */
static void cpu_model(char *out, size_t cap)
{
  snprintf(out, cap, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) {
    return;
  }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon ||
        (strncmp(line, "model name", 10) != 0 && strncmp(line, "Hardware", 8) != 0 &&
         strncmp(line, "CPU part", 8) != 0)) {
      continue;
    }
    char *v = colon + 1;
    v += strspn(v, " \t");
    v[strcspn(v, "\n")] = 0;
    snprintf(out, cap, "%s", v);
    break;
  }
  fclose(f);
}

void nestcl_pm_host(char *out, size_t cap)
{
  char cpu[200];
  cpu_model(cpu, sizeof cpu);
  struct utsname u;
  int have = uname(&u) == 0;
  snprintf(out, cap, "%s, %ld cores, %s %s %s", cpu, sysconf(_SC_NPROCESSORS_ONLN), have ? u.sysname : "?",
           have ? u.release : "?", have ? u.machine : "?");
}

static void put_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void put_num(FILE *f, double v)
{
  if (isfinite(v))
    fprintf(f, "%.17g", v);
  else
    fputs("null", f);
}

static void put_stage(FILE *f, const char *name, const nestcl_pm_stage *s, int last)
{
  fprintf(f, "    \"%s\": {\"runs\": %d, \"folds\": %d, \"r2_cv\": ", name, s->runs, s->folds);
  put_num(f, s->r2_cv);
  fputs(", \"r2_train\": ", f);
  put_num(f, s->r2_train);
  fprintf(f, "}%s\n", last ? "" : ",");
}

static void put_rates(FILE *f, const char *name, const nestcl_pm_rate_table *t, int last)
{
  fprintf(f, "    \"%s\": [", name);
  for (int i = 0; i < t->n; ++i) {
    fprintf(f, "%s[", i ? ", " : "");
    put_num(f, t->N[i]);
    fputs(", ", f);
    put_num(f, t->F[i]);
    fputc(']', f);
  }
  fprintf(f, "]%s\n", last ? "" : ",");
}

int nestcl_pm_profile_save(const nestcl_pm_profile *p, const char *path)
{
  size_t n = strlen(path) + 32;
  char *tmp = malloc(n);
  if (!tmp) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    int rc = nestcl_set_error(NESTCL_EIO, "cannot write %s: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
  }
  fprintf(f, "{\n  \"schema\": \"%s\",\n  \"benchmark\": ", PROFILE_SCHEMA);
  put_string(f, p->benchmark);
  fputs(",\n  \"device_name\": ", f);
  put_string(f, p->device_name);
  fputs(",\n  \"device_driver\": ", f);
  put_string(f, p->device_driver);
  fprintf(f, ",\n  \"cores\": %d,\n  \"created\": %.0f,\n  \"date\": ", p->cores, p->created);
  /* For a reader: the date and the machine say which real machine a repository profile describes. */
  char date[32] = "";
  time_t t = (time_t)p->created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) {
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  put_string(f, date);
  fputs(",\n  \"machine\": ", f);
  put_string(f, p->machine);
  fputs(",\n  \"parameters\": {\n", f);
  for (int i = 0; i < NESTCL_PM_NP; ++i) {
    fprintf(f, "    \"%s\": {\"value\": ", nestcl_pm_param_names[i]);
    put_num(f, p->p[i]);
    fputs(", \"se\": ", f);
    put_num(f, p->se[i]);
    fprintf(f, ", \"fitted\": %s, \"held_at_zero\": %s}%s\n", p->fitted[i] ? "true" : "false",
            p->fitted[i] == 2 ? "true" : "false", i + 1 < NESTCL_PM_NP ? "," : "");
  }
  fputs("  },\n  \"stages\": {\n", f);
  put_stage(f, "cpu", &p->cpu, 0);
  put_stage(f, "gpu", &p->gpu, 0);
  put_stage(f, "co", &p->co, 1);
  fputs("  },\n  \"rates\": {\n", f);
  put_rates(f, "stdp", &p->rate_stdp, 0);
  put_rates(f, "static", &p->rate_static, 1);
  fputs("  }\n}\n", f);
  int ok = !ferror(f);
  if (fclose(f) != 0)
    ok = 0;
  if (ok && rename(tmp, path) != 0)
    ok = 0;
  int rc = 0;
  if (!ok) {
    rc = nestcl_set_error(NESTCL_EIO, "cannot write %s: %s", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return rc;
}

static int load_stage(const pmj *root, const char *name, nestcl_pm_stage *s, char *why, size_t cap)
{
  char path[64];
  snprintf(path, sizeof path, "stages.%s", name);
  const pmj *o = pmj_path(root, path);
  if (!o || o->type != PMJ_OBJECT) {
    snprintf(why, cap, "no stage '%s'", name);
    return -1;
  }
  int ok = 1;
  double runs = pmj_number(o, "runs", &ok), folds = pmj_number(o, "folds", &ok);
  if (!ok || runs < 0 || runs > 1e9 || folds < 0 || folds > 1e9 || runs != floor(runs) || folds != floor(folds)) {
    snprintf(why, cap, "stage '%s': runs and folds must be whole numbers", name);
    return -1;
  }
  s->runs = (int)runs;
  s->folds = (int)folds;
  const pmj *r = pmj_get(o, "r2_cv"), *t = pmj_get(o, "r2_train");
  s->r2_cv = r && r->type == PMJ_NUMBER ? r->num : NAN;
  s->r2_train = t && t->type == PMJ_NUMBER ? t->num : NAN;
  return 0;
}

static int load_rates(const pmj *root, const char *name, nestcl_pm_rate_table *t, char *why, size_t cap)
{
  char path[64];
  snprintf(path, sizeof path, "rates.%s", name);
  const pmj *a = pmj_path(root, path);
  t->n = 0;
  if (!a || a->type != PMJ_ARRAY || a->n > NESTCL_PM_RATE_POINTS) {
    snprintf(why, cap, "rates.%s must be an array of at most %d [N, rate] pairs", name, NESTCL_PM_RATE_POINTS);
    return -1;
  }
  for (size_t i = 0; i < a->n; ++i) {
    const pmj *e = &a->items[i];
    if (e->type != PMJ_ARRAY || e->n != 2 || e->items[0].type != PMJ_NUMBER || e->items[1].type != PMJ_NUMBER ||
        !(e->items[0].num > 0) || !(e->items[1].num >= 0) || (i > 0 && !(e->items[0].num > t->N[i - 1]))) {
      snprintf(why, cap, "rates.%s[%zu] is not an [N, rate] pair with N ascending and rate >= 0", name, i);
      return -1;
    }
    t->N[i] = e->items[0].num;
    t->F[i] = e->items[1].num;
    t->n = (int)i + 1;
  }
  return 0;
}

int nestcl_pm_profile_load(const char *path, const char *device_name, const char *driver, nestcl_pm_profile *p)
{
  char err[512], why[256] = "";
  pmj *root = pmj_parse_file(path, err, sizeof err);
  if (!root) {
    return nestcl_set_error(access(path, F_OK) == 0 ? NESTCL_EINVAL : NESTCL_EIO, "corrupt profile: %s", err);
  }
  memset(p, 0, sizeof *p);
  int rc = 0;
  const char *schema = pmj_string(root, "schema");
  const char *bench = pmj_string(root, "benchmark"), *dn = pmj_string(root, "device_name"),
             *dd = pmj_string(root, "device_driver");
  int ok = 1;
  double cores = pmj_number(root, "cores", &ok), created = pmj_number(root, "created", &ok);
  if (!schema || strcmp(schema, PROFILE_SCHEMA) != 0) {
    snprintf(why, sizeof why, "schema is not %s (a profile of another nestcl version: rebuild it)", PROFILE_SCHEMA);
  } else if (!bench || !dn || !dd || strlen(bench) >= sizeof p->benchmark || strlen(dn) >= sizeof p->device_name ||
             strlen(dd) >= sizeof p->device_driver) {
    snprintf(why, sizeof why, "benchmark, device_name and device_driver must be strings of sensible length");
  } else if (!ok || cores < 1 || cores > 65536 || cores != floor(cores) || !(created >= 0)) {
    snprintf(why, sizeof why, "cores must be a whole number >= 1 and created a time");
  } else {
    snprintf(p->benchmark, sizeof p->benchmark, "%s", bench);
    snprintf(p->device_name, sizeof p->device_name, "%s", dn);
    snprintf(p->device_driver, sizeof p->device_driver, "%s", dd);
    p->cores = (int)cores;
    p->created = created;
    const char *machine = pmj_string(root, "machine"); /* optional: older profiles lack it */
    snprintf(p->machine, sizeof p->machine, "%s", machine ? machine : "");
    const pmj *params = pmj_get(root, "parameters");
    if (!params || params->type != PMJ_OBJECT || params->n != NESTCL_PM_NP) {
      snprintf(why, sizeof why, "parameters must hold exactly the model's %d parameters", NESTCL_PM_NP);
    }
    for (int i = 0; i < NESTCL_PM_NP && !*why; ++i) {
      const pmj *e = pmj_get(params, nestcl_pm_param_names[i]);
      const pmj *v = pmj_get(e, "value"), *se = pmj_get(e, "se"), *fit = pmj_get(e, "fitted"),
                *z = pmj_get(e, "held_at_zero");
      if (!v || v->type != PMJ_NUMBER || !se || se->type != PMJ_NUMBER || !fit || fit->type != PMJ_BOOL || !z ||
          z->type != PMJ_BOOL || v->num < 0.0 || se->num < 0.0 || (z->num != 0 && v->num != 0.0)) {
        snprintf(why, sizeof why, "parameter %s: needs a value >= 0, se >= 0, fitted and held_at_zero",
                 nestcl_pm_param_names[i]);
        break;
      }
      p->p[i] = v->num;
      p->se[i] = se->num;
      p->fitted[i] = fit->num != 0 ? (z->num != 0 ? 2 : 1) : 0;
    }
    if (!*why && load_stage(root, "cpu", &p->cpu, why, sizeof why) == 0 &&
        load_stage(root, "gpu", &p->gpu, why, sizeof why) == 0 &&
        load_stage(root, "co", &p->co, why, sizeof why) == 0 &&
        load_rates(root, "stdp", &p->rate_stdp, why, sizeof why) == 0 &&
        load_rates(root, "static", &p->rate_static, why, sizeof why) == 0 && p->cpu.runs + p->gpu.runs == 0) {
      snprintf(why, sizeof why, "no stage was fitted");
    }
  }
  if (*why) {
    rc = nestcl_set_error(NESTCL_EINVAL, "corrupt profile %s: %s", path, why);
  } else if ((device_name && strcmp(device_name, p->device_name) != 0) ||
             (driver && strcmp(driver, p->device_driver) != 0)) {
    rc = nestcl_set_error(NESTCL_ENODEV, "profile %s is of device '%s' (driver %s), not of '%s' (driver %s)", path,
                          p->device_name, p->device_driver, device_name ? device_name : p->device_name,
                          driver ? driver : p->device_driver);
  }
  pmj_free(root);
  return rc;
}

static int find_cache(const char *benchmark, const char *device_name, const char *driver, nestcl_pm_profile *prof,
                      char *path, size_t cap)
{
  if (nestcl_pm_profile_path(benchmark, device_name, driver, path, cap) != 0) {
    return NESTCL_PM_NO_CACHE;
  }
  if (access(path, F_OK) != 0) {
    return NESTCL_PM_MISSING;
  }
  if (nestcl_pm_profile_load(path, device_name, driver, prof) != 0) {
    return NESTCL_PM_UNUSABLE;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > 0 && prof->cores != cores) {
    nestcl_set_error(NESTCL_EINVAL, "profile %s is stale: it was fitted on %d cores, this host has %ld", path,
                     prof->cores, cores);
    return NESTCL_PM_UNUSABLE;
  }
  return NESTCL_PM_FOUND;
}

int nestcl_pm_profile_find(const char *benchmark, const char *device_name, const char *driver, nestcl_pm_profile *prof,
                           char *path, size_t cap)
{
  int st = find_cache(benchmark, device_name, driver, prof, path, cap);
  if (st == NESTCL_PM_FOUND) {
    prof->repository = 0;
    return st;
  }
  /* The cache's reason stays the error of record when the repository has nothing either. */
  char why[1024];
  snprintf(why, sizeof why, "%s", nestcl_last_error());
  char rpath[4096];
  nestcl_pm_profile rp;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (nestcl_pm_profile_find_repository(benchmark, device_name, driver, (int)cores, &rp, rpath, sizeof rpath, NULL,
                                        0) == NESTCL_PM_FOUND) {
    *prof = rp;
    snprintf(path, cap, "%s", rpath);
    return NESTCL_PM_FOUND;
  }
  if (st == NESTCL_PM_UNUSABLE) {
    nestcl_set_error(NESTCL_EINVAL, "%s", why);
  }
  return st;
}

/* dir + rel, resolved, when it is a folder. */
static int folder_at(const char *dir, const char *rel, char *out, size_t cap)
{
  char p[PATH_MAX + 64], real[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  struct stat st;
  if (!realpath(p, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || strlen(real) >= cap) {
    return -1;
  }
  snprintf(out, cap, "%s", real);
  return 0;
}

int nestcl_pm_repository(char *dir, size_t cap)
{
  const char *env = getenv("NESTCL_PERFMODEL_PROFILES");
  if (env && *env) {
    return strcmp(env, "off") == 0 ? -1 : folder_at(env, ".", dir, cap);
  }
  /* The file this code was loaded from: the nestcl binary, or libnestcl_perfmodel.so under NEST. */
  char obj[PATH_MAX] = "";
  Dl_info info;
  if (!dladdr((void *)nestcl_pm_repository, &info) || !info.dli_fname || !*info.dli_fname ||
      !realpath(info.dli_fname, obj)) {
    ssize_t n = readlink("/proc/self/exe", obj, sizeof obj - 1);
    if (n <= 0) {
      return -1;
    }
    obj[n] = 0;
  }
  char *slash = strrchr(obj, '/');
  if (!slash) {
    return -1;
  }
  *slash = 0;
  /* bin/ or lib/ (of an install or a build tree), or lib/<multiarch>/ */
  static const char *const rel[] = {"../share/nestcl/perfmodel/profiles", "../../share/nestcl/perfmodel/profiles"};
  for (size_t k = 0; k < sizeof rel / sizeof *rel; ++k) {
    if (folder_at(obj, rel[k], dir, cap) == 0) {
      return 0;
    }
  }
  return -1;
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, so that the choice among equal matches does not depend on readdir's order. */
int nestcl_pm_list_profiles(const char *dir, char ***names, size_t *n)
{
  DIR *d = opendir(dir);
  *names = NULL;
  *n = 0;
  if (!d) {
    return -1;
  }
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) {
      continue;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char **t = realloc(*names, cap * sizeof *t);
      if (!t) {
        break;
      }
      *names = t;
    }
    if (((*names)[*n] = strdup(de->d_name))) {
      ++*n;
    }
  }
  closedir(d);
  if (*n) {
    qsort(*names, *n, sizeof **names, cmp_name);
  }
  return 0;
}

/* Appends to why (when given) what a file of the repository was, if not the one wanted. */
static void note_other(char *why, size_t cap, const char *name, const nestcl_pm_profile *p, int loaded)
{
  if (!why) {
    return;
  }
  size_t len = strlen(why);
  if (len + 1 >= cap) {
    return;
  }
  if (loaded) {
    snprintf(why + len, cap - len, "%s%s: %s on '%s' (driver %s, %d cores)", len ? "; " : "", name, p->benchmark,
             p->device_name, p->device_driver, p->cores);
  } else {
    snprintf(why + len, cap - len, "%s%s: unreadable (%s)", len ? "; " : "", name, nestcl_last_error());
  }
}

int nestcl_pm_profile_find_repository(const char *benchmark, const char *device_name, const char *driver, int cores,
                                      nestcl_pm_profile *prof, char *path, size_t cap, char *why, size_t why_cap)
{
  char dir[PATH_MAX];
  if (why && why_cap) {
    *why = 0;
  }
  if (nestcl_pm_repository(dir, sizeof dir) != 0) {
    if (why && why_cap) {
      snprintf(why, why_cap, "no folder of repository profiles");
    }
    return NESTCL_PM_MISSING;
  }
  char **names;
  size_t n;
  nestcl_pm_list_profiles(dir, &names, &n);
  int found = 0;
  for (size_t k = 0; k < n; ++k) {
    char file[PATH_MAX + 256];
    snprintf(file, sizeof file, "%s/%s", dir, names[k]);
    nestcl_pm_profile p;
    int loaded = nestcl_pm_profile_load(file, NULL, NULL, &p) == 0;
    if (!loaded || strcmp(p.benchmark, benchmark) != 0 || strcmp(p.device_name, device_name) != 0 ||
        strcmp(p.device_driver, driver) != 0 || p.cores != cores) {
      note_other(why, why_cap, names[k], &p, loaded);
      continue;
    }
    /* Of several fits of this machine, the newest. */
    if (!found || p.created > prof->created) {
      *prof = p;
      prof->repository = 1;
      snprintf(path, cap, "%s", file);
      found = 1;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    free(names[k]);
  }
  free(names);
  if (!found && why && why_cap && !*why) {
    snprintf(why, why_cap, "%s holds no profile", dir);
  } else if (!found && why && why_cap) {
    char tail[2048];
    snprintf(tail, sizeof tail, "%s", why);
    snprintf(why, why_cap, "%s holds other machines' profiles only: %s", dir, tail);
  }
  return found ? NESTCL_PM_FOUND : NESTCL_PM_MISSING;
}
