/*
 * nestcl-info: what OpenCL devices this machine offers nestcl, and the
 * properties that matter to it (memory limits, fp64, 64-bit atomics for the
 * fixed-point ring buffers, work-group multiple). It resolves --device exactly
 * as the simulator does, so it is also the way to check a spec before a run.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestcl/device.h"
#include "nestcl/version.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: nestcl-info [--device SPEC] [--json]\n"
          "Lists the OpenCL devices nestcl can use.\n\n"
          "  --device SPEC  show only the device SPEC selects: cpu, gpu, gpu:1,\n"
          "                 <platform or device name substring>:<index>, or an index\n"
          "                 (default when given empty: $NESTCL_DEVICE, else the first GPU)\n"
          "  --json         print JSON on stdout instead of text\n"
          "  --help         show this help\n"
          "  --version      show the version\n\n"
          "exit status: 0 ok, 1 OpenCL failure, 2 usage error or no such device\n");
}

static void json_string(const char *s)
{
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void print_json(const nestcl_device_info *d, int n)
{
  printf("{\n  \"version\": ");
  json_string(nestcl_version());
  printf(",\n  \"devices\": [");
  for (int i = 0; i < n; i++) {
    printf("%s\n    {\"platform\": ", i ? "," : "");
    json_string(d[i].platform_name);
    printf(", \"name\": ");
    json_string(d[i].device_name);
    printf(", \"vendor\": ");
    json_string(d[i].vendor);
    printf(", \"type\": \"%s\", \"spec\": \"%s:%d\",\n     \"compute_units\": %u, \"global_mem_bytes\": %llu, "
           "\"max_alloc_bytes\": %llu,\n     \"fp64\": %s, \"int64_atomics\": %s, \"int64_extended_atomics\": %s, "
           "\"max_work_group_size\": %zu, \"local_mem_bytes\": %llu, \"preferred_wg_multiple\": %zu,\n     "
           "\"device_version\": ",
           d[i].type, d[i].type, d[i].type_index, d[i].compute_units, (unsigned long long)d[i].global_mem_bytes,
           (unsigned long long)d[i].max_alloc_bytes, d[i].fp64 ? "true" : "false",
           d[i].int64_atomics ? "true" : "false", d[i].int64_ext_atomics ? "true" : "false", d[i].max_wg_size,
           (unsigned long long)d[i].local_mem_bytes, d[i].preferred_wg_multiple);
    json_string(d[i].device_version);
    printf(", \"driver_version\": ");
    json_string(d[i].driver_version);
    printf("}");
  }
  printf("\n  ]\n}\n");
}

static void print_text(const nestcl_device_info *d, int n)
{
  for (int i = 0; i < n; i++) {
    printf("%sdevice %s:%d\n", i ? "\n" : "", d[i].type, d[i].type_index);
    printf("  platform               %s\n", d[i].platform_name);
    printf("  name                   %s\n", d[i].device_name);
    printf("  vendor                 %s\n", d[i].vendor);
    printf("  type                   %s\n", d[i].type);
    printf("  compute units          %u\n", d[i].compute_units);
    printf("  global memory          %llu bytes (%.2f GiB)\n", (unsigned long long)d[i].global_mem_bytes,
           (double)d[i].global_mem_bytes / (1 << 30));
    printf("  max allocation         %llu bytes (%.2f GiB)\n", (unsigned long long)d[i].max_alloc_bytes,
           (double)d[i].max_alloc_bytes / (1 << 30));
    printf("  fp64                   %s\n", d[i].fp64 ? "yes" : "no");
    printf("  int64 atomics          %s (base), %s (extended)\n", d[i].int64_atomics ? "yes" : "no",
           d[i].int64_ext_atomics ? "yes" : "no");
    printf("  max work-group size    %zu\n", d[i].max_wg_size);
    printf("  local memory           %llu bytes\n", (unsigned long long)d[i].local_mem_bytes);
    if (d[i].preferred_wg_multiple)
      printf("  preferred wg multiple  %zu\n", d[i].preferred_wg_multiple);
    else
      printf("  preferred wg multiple  unknown (the probe kernel did not build)\n");
    printf("  device version         %s\n", d[i].device_version);
    printf("  driver version         %s\n", d[i].driver_version);
  }
}

int main(int argc, char **argv)
{
  static const struct option longopts[] = {{"device", required_argument, NULL, 'd'},
                                           {"json", no_argument, NULL, 'j'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, 'V'},
                                           {NULL, 0, NULL, 0}};
  const char *spec = NULL;
  int json = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 'd':
      spec = optarg;
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      usage(stdout);
      return 0;
    case 'V':
      printf("nestcl-info %s\n", nestcl_version());
      return 0;
    default:
      fprintf(stderr, "error: unknown or incomplete option '%s'\n", argv[optind - 1]);
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "error: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }

  nestcl_device_info one, *list = NULL;
  int n = 0, rc;
  if (spec) {
    rc = nestcl_select_device(spec, &one);
    list = &one;
    n = 1;
  } else {
    rc = nestcl_list_devices(&list, &n);
  }
  if (rc) {
    fprintf(stderr, "error: %s\n", nestcl_last_error());
    return rc == NESTCL_ENODEV || rc == NESTCL_EINVAL ? 2 : 1;
  }
  if (json)
    print_json(list, n);
  else if (n == 0)
    printf("no OpenCL devices found (is an ICD such as pocl-opencl-icd installed?)\n");
  else
    print_text(list, n);
  if (!spec)
    free(list);
  return n == 0 ? 1 : 0;
}
