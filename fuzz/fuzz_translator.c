/*
 * libFuzzer target: nestcl-translate's whole pipeline (parse with libclang ->
 * checks -> rendering -> emitters -> files) on one model unit. The input is
 * a header, optionally followed by a line "//@@cpp@@" and a source file; they
 * are written as unit.h and unit.cpp in a scratch folder and translated with
 * the project's shim headers (-I models/shim -I models), as the build does.
 * The translator's main() is compiled into this target under another name
 * (fuzz/CMakeLists.txt). Any outcome is fine (translated, CPU-only with
 * diagnostics, a usage or run-time error) except a crash, a sanitizer report,
 * a hang or a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nestcl_translate_main(int argc, char **argv);

static char dir[256];

static int write_file(const char *path, const uint8_t *p, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int ok = fwrite(p, 1, n, f) == n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/nestcl-fuzz-translator.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    if (mkdtemp(strcat(dir, ".XXXXXX")) == NULL)
      abort();
  }
  static const char sep[] = "//@@cpp@@";
  const uint8_t *cpp = NULL;
  size_t hn = size, cn = 0;
  for (size_t k = 0; k + sizeof sep - 1 <= size; ++k) {
    if (memcmp(data + k, sep, sizeof sep - 1) == 0) {
      hn = k;
      cpp = data + k + sizeof sep - 1;
      cn = size - hn - (sizeof sep - 1);
      break;
    }
  }
  char h[320], c[320], out[320];
  snprintf(h, sizeof h, "%s/unit.h", dir);
  snprintf(c, sizeof c, "%s/unit.cpp", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  unlink(c);
  if (write_file(h, data, hn) || (cpp && write_file(c, cpp, cn)))
    abort();
  char *argv[] = {
    "nestcl-translate", cpp ? c : h, "-o", out, "-I", NESTCL_FUZZ_SHIM, "-I", NESTCL_FUZZ_MODELS, "--report", "json",
    "--report-file",    NULL,        NULL};
  char rep[320];
  snprintf(rep, sizeof rep, "%s/report.json", dir);
  argv[11] = rep;
  /* stderr carries the diagnostics: silence them unless asked (NESTCL_FUZZ_VERBOSE). */
  static int quiet = -1;
  if (quiet < 0)
    quiet = getenv("NESTCL_FUZZ_VERBOSE") == NULL;
  FILE *saved = NULL;
  if (quiet) {
    fflush(stderr);
    saved = stderr;
    stderr = fopen("/dev/null", "w");
    if (!stderr)
      stderr = saved, saved = NULL;
  }
  int rc = nestcl_translate_main(12, argv);
  if (saved) {
    fclose(stderr);
    stderr = saved;
  }
  if (rc != 0 && rc != 1 && rc != 2 && rc != 3) {
    fprintf(stderr, "nestcl-translate returned %d, not one of its documented exit codes\n", rc);
    abort();
  }
  return 0;
}
