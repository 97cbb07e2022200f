/*
 * Program building and the binary cache, observed through the per-device
 * counters (not timing): a second build on a fresh device object is a hit;
 * a damaged entry (truncated, bytes flipped, or sound on disk but refused by
 * the driver) is counted as corrupt, rebuilt, and the program still computes
 * the right thing. A syntax error yields the compiler's own message.
 *
 * Several processes filling the same empty cache at once must leave one sound
 * entry and no temporary files.
 *
 * usage: test_program_cache build_error|hit|truncate|flip|refused|concurrent
 * The cache-counting modes need NESTCL_CACHE_DIR set to a folder of their own,
 * which they empty first.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hash.h"

static const char *kernel_src = "#pragma OPENCL FP_CONTRACT OFF\n"
                                "__kernel void affine(__global const int *in, __global int *out, int k) {\n"
                                "  size_t i = get_global_id(0);\n"
                                "  out[i] = in[i] * k + (int)i;\n"
                                "}\n";

enum { N = 64 };

/* Runs the kernel once and checks every output element. */
static void run_and_check(nestcl_device *dev, cl_program prog)
{
  int in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = 3 * i - 50;
  cl_int err;
  cl_kernel k = clCreateKernel(prog, "affine", &err);
  CHECK(err == CL_SUCCESS);
  nestcl_buffer bin, bout;
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "test input", sizeof in, CL_MEM_READ_ONLY, in, &bin));
  CHECK_OK(nestcl_buffer_alloc(dev, NESTCL_MEM_OTHER, "test output", sizeof out, CL_MEM_WRITE_ONLY, NULL, &bout));
  int factor = 7;
  CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &bin.mem) == CL_SUCCESS);
  CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &bout.mem) == CL_SUCCESS);
  CHECK(clSetKernelArg(k, 2, sizeof factor, &factor) == CL_SUCCESS);
  cl_command_queue q = nestcl_device_queue(dev, 0);
  size_t global = N;
  CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS);
  CHECK(clEnqueueReadBuffer(q, bout.mem, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) == CL_SUCCESS);
  for (int i = 0; i < N; i++)
    CHECK(out[i] == in[i] * factor + i);
  nestcl_buffer_free(dev, &bin);
  nestcl_buffer_free(dev, &bout);
  clReleaseKernel(k);
}

/* Opens a new device object, builds the test program with these options,
 * checks it runs, and returns the device's cache counters for that one build. */
static nestcl_cache_stats build_with(const char *options)
{
  nestcl_device *dev;
  cl_program prog;
  nestcl_cache_stats st;
  CHECK_OK(nestcl_device_open("cpu", 1, &dev));
  CHECK_OK(nestcl_program_build(dev, kernel_src, options, &prog));
  run_and_check(dev, prog);
  clReleaseProgram(prog);
  nestcl_device_cache_stats(dev, &st);
  nestcl_device_close(dev);
  return st;
}

static nestcl_cache_stats build_once(void)
{
  return build_with("-DUNUSED=1");
}

static const char *cache_dir(void)
{
  const char *d = getenv("NESTCL_CACHE_DIR");
  CHECK(d && *d && strcmp(d, "off") != 0);
  return d;
}

/* Empties the test's cache folder and returns how many entries it held. */
static int wipe_cache(int remove)
{
  DIR *dir = opendir(cache_dir());
  if (!dir)
    return 0;
  int n = 0;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
      continue;
    n++;
    snprintf(path, sizeof path, "%s/%s", cache_dir(), e->d_name);
    if (remove)
      CHECK(unlink(path) == 0);
  }
  closedir(dir);
  return n;
}

/* The one entry in the cache folder, read whole. */
static unsigned char *read_entry(char *path, size_t cap, long *size)
{
  DIR *dir = opendir(cache_dir());
  CHECK(dir != NULL);
  struct dirent *e;
  int found = 0;
  while ((e = readdir(dir)) != NULL)
    if (strstr(e->d_name, ".clbin")) {
      snprintf(path, cap, "%s/%s", cache_dir(), e->d_name);
      found++;
    }
  closedir(dir);
  CHECK(found == 1);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)*size);
  CHECK(buf && fread(buf, 1, (size_t)*size, f) == (size_t)*size);
  fclose(f);
  return buf;
}

static void write_file(const char *path, const unsigned char *buf, long size)
{
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(buf, 1, (size_t)size, f) == (size_t)size && fclose(f) == 0);
}

enum { HEADER = 88, CHECKSUM_AT = 56 }; /* the entry layout of program_cache.c */

static void damage(const char *mode)
{
  char path[4096];
  long size;
  unsigned char *buf = read_entry(path, sizeof path, &size);
  CHECK(size > HEADER + 16);
  if (strcmp(mode, "truncate") == 0) {
    write_file(path, buf, HEADER + (size - HEADER) / 2);
  } else if (strcmp(mode, "flip") == 0) {
    for (long i = HEADER + (size - HEADER) / 3; i < HEADER + (size - HEADER) / 3 + 8; i++)
      buf[i] ^= 0xA5;
    write_file(path, buf, size);
  } else { /* refused: a well-formed entry whose payload no driver accepts */
    for (long i = HEADER; i < size; i++)
      buf[i] = (unsigned char)(i * 131 + 7);
    nestcl_sha256_buffer(buf + HEADER, (size_t)(size - HEADER), buf + CHECKSUM_AT);
    write_file(path, buf, size);
  }
  free(buf);
}

int main(int argc, char **argv)
{
  CHECK(argc == 2);
  const char *mode = argv[1];
  if (strcmp(mode, "build_error") == 0) {
    nestcl_device *dev;
    cl_program prog = NULL;
    CHECK_OK(nestcl_device_open("cpu", 1, &dev));
    const char *bad = "__kernel void broken(__global float *x) { x[0] = undeclared_thingy + 1.0f; }\n";
    CHECK(nestcl_program_build(dev, bad, NULL, &prog) == NESTCL_EBUILD);
    CHECK(prog == NULL);
    const char *msg = nestcl_last_error();
    printf("build error message:\n%s\n", msg);
    CHECK(strstr(msg, "clBuildProgram failed") != NULL);
    CHECK(strstr(msg, nestcl_device_get_info(dev)->device_name) != NULL);
    CHECK(strstr(msg, "undeclared_thingy") != NULL); /* the compiler's diagnostic, not just a code */
    nestcl_device_close(dev);
    return 0;
  }

  wipe_cache(1);
  if (strcmp(mode, "concurrent") == 0) {
    /* Fork before this process touches OpenCL: a driver's threads do not survive fork(). */
    enum { KIDS = 4 };
    pid_t kids[KIDS];
    for (int i = 0; i < KIDS; i++) {
      kids[i] = fork();
      CHECK(kids[i] >= 0);
      if (kids[i] == 0) {
        nestcl_cache_stats own = build_once();
        _exit(own.hits + own.misses == 1 && own.corrupt == 0 ? 0 : 1);
      }
    }
    for (int i = 0; i < KIDS; i++) {
      int status;
      CHECK(waitpid(kids[i], &status, 0) == kids[i]);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(wipe_cache(0) == 1);
    nestcl_cache_stats st = build_once();
    CHECK(st.hits == 1 && st.misses == 0 && st.corrupt == 0);
    printf("program cache concurrent ok\n");
    return 0;
  }
  nestcl_cache_stats st = build_once();
  CHECK(st.misses == 1 && st.hits == 0 && st.corrupt == 0);
  CHECK(wipe_cache(0) == 1); /* exactly one entry, no temporary file left behind */

  if (strcmp(mode, "hit") == 0) {
    st = build_once();
    CHECK(st.hits == 1 && st.misses == 0 && st.corrupt == 0);
    /* The options are part of the key: another glibc variant of translated code is another entry. */
    st = build_with("-DUNUSED=1 -DNESTCL_LIBM_VARIANT=0");
    CHECK(st.hits == 0 && st.misses == 1);
    st = build_with("-DUNUSED=1 -DNESTCL_LIBM_VARIANT=1");
    CHECK(st.hits == 0 && st.misses == 1);
    st = build_with("-DUNUSED=1 -DNESTCL_LIBM_VARIANT=0");
    CHECK(st.hits == 1 && st.misses == 0);
    CHECK(wipe_cache(0) == 3);
    /* With the cache off nothing is read or written. */
    wipe_cache(1);
    setenv("NESTCL_CACHE_DIR", "off", 1);
    st = build_once();
    CHECK(st.hits == 0 && st.misses == 1);
    st = build_once();
    CHECK(st.hits == 0 && st.misses == 1);
    CHECK(access("off", F_OK) != 0); /* "off" is no folder name */
  } else if (strcmp(mode, "truncate") == 0 || strcmp(mode, "flip") == 0 || strcmp(mode, "refused") == 0) {
    damage(mode);
    st = build_once();
    CHECK(st.corrupt == 1 && st.misses == 1 && st.hits == 0);
    /* The rebuilt entry replaced the damaged one. */
    CHECK(wipe_cache(0) == 1);
    st = build_once();
    CHECK(st.hits == 1 && st.misses == 0 && st.corrupt == 0);
  } else {
    fprintf(stderr, "error: unknown mode '%s'\n", mode);
    return 2;
  }
  printf("program cache %s ok\n", mode);
  return 0;
}
