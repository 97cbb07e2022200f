/*
 * nestcl_tr_clbuild FILE.cl...: builds each translated kernel source on the
 * default OpenCL device through the device layer, with the runtime headers
 * (nestcl_rt_source) prepended as the runtime does. Exit 0 when all build,
 * 1 with the build log otherwise, 77 when there is no device. Used by the
 * real-NEST translator test.
 */
#include "nestcl/device.h"
#include "nestcl_libm.h"
#include "nestcl_rt_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  long n;
  char *s;
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  s = malloc((size_t)n + strlen(nestcl_rt_source) + 2);
  strcpy(s, nestcl_rt_source);
  strcat(s, "\n");
  if (fread(s + strlen(s), 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(s);
    return NULL;
  }
  s[strlen(nestcl_rt_source) + 1 + (size_t)n] = 0;
  fclose(f);
  return s;
}

int main(int argc, char **argv)
{
  nestcl_device *dev;
  int k, bad = 0;
  char opts[48];
  if (argc < 2 || !strcmp(argv[1], "--help")) {
    fprintf(argc < 2 ? stderr : stdout, "usage: nestcl_tr_clbuild FILE.cl...\n");
    return argc < 2 ? 2 : 0;
  }
  if (nestcl_device_open(NULL, 1, &dev)) {
    fprintf(stderr, "skipped: no OpenCL device: %s\n", nestcl_last_error());
    return 77;
  }
  /* Translated code calls nestcl_glibc_exp(x, NESTCL_LIBM_VARIANT): built as the runtime builds it. */
  snprintf(opts, sizeof opts, "-DNESTCL_LIBM_VARIANT=%d", nestcl_libm_host_variant() != 0);
  for (k = 1; k < argc; k++) {
    char *src = read_file(argv[k]);
    cl_program p;
    if (!src) {
      fprintf(stderr, "error: cannot read %s\n", argv[k]);
      bad = 1;
      continue;
    }
    if (nestcl_program_build(dev, src, opts, &p)) {
      fprintf(stderr, "error: %s does not build: %s\n", argv[k], nestcl_last_error());
      bad = 1;
    } else {
      printf("%s: builds\n", argv[k]);
      clReleaseProgram(p);
    }
    free(src);
  }
  nestcl_device_close(dev);
  return bad;
}
