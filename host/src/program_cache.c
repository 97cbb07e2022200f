/*
 * Program building through an on-disk binary cache. Translated kernels are
 * built at run time with population constants as -D values, so the same
 * program is compiled again on every run; the cache turns that into a file
 * read. An entry is named by the SHA-256 of everything that determines the
 * binary and carries its own length and checksum, so a truncated or damaged
 * file is recognised and rebuilt rather than handed to the driver. A binary the
 * driver refuses (e.g. after a driver update that kept its version string) is
 * treated the same way. The cache is an optimisation: if its directory cannot
 * be created or written, programs are still built, only not stored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device_internal.h"
#include "hash.h"

/* Entry layout, little-endian: magic[8] version:u32 reserved:u32 length:u64
 * key[32] sha256(payload)[32], then the payload (the program binary). */
#define ENTRY_MAGIC "NESTCLB\x01"
#define ENTRY_VERSION 1u
#define HEADER_BYTES (8 + 4 + 4 + 8 + 32 + 32)

static void put_u32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int bytes)
{
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* mkdir -p; returns 0 when the directory exists afterwards. */
static int make_dirs(const char *path)
{
  char buf[4096];
  if (strlen(path) >= sizeof buf)
    return -1;
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST)
    return -1;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* The cache directory into dir, or 0 when caching is off or impossible. */
static int cache_dir(char *dir, size_t cap)
{
  const char *env = getenv("NESTCL_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  if (env && *env) {
    if (strcmp(env, "off") == 0)
      return 0;
    n = snprintf(dir, cap, "%s", env);
  } else if (xdg && *xdg) {
    n = snprintf(dir, cap, "%s/nestcl", xdg);
  } else if (home && *home) {
    n = snprintf(dir, cap, "%s/.cache/nestcl", home);
  } else {
    return 0;
  }
  if (n < 0 || (size_t)n >= cap)
    return 0;
  if (make_dirs(dir) != 0) {
    if (nestcl_verbose())
      fprintf(stderr, "nestcl: cache directory %s unusable (%s); not caching\n", dir, strerror(errno));
    return 0;
  }
  return 1;
}

static void hash_field(nestcl_sha256 *s, const char *text)
{
  nestcl_sha256_update(s, text, strlen(text) + 1); /* the NUL separates fields unambiguously */
}

static void entry_key(const nestcl_device *dev, const char *source, const char *options, uint8_t key[32])
{
  nestcl_sha256 s;
  nestcl_sha256_init(&s);
  hash_field(&s, "nestcl program cache v1");
  hash_field(&s, source);
  hash_field(&s, options);
  hash_field(&s, dev->info.platform_name);
  hash_field(&s, dev->info.device_name);
  hash_field(&s, dev->info.device_version);
  hash_field(&s, dev->info.driver_version);
  nestcl_sha256_final(&s, key);
}

/* Reads a whole entry. Returns 1 with *payload (malloc'ed) when it is sound,
 * 0 when there is no entry, -1 when there is one but it is corrupt. */
static int read_entry(const char *path, const uint8_t key[32], uint8_t **payload, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return errno == ENOENT ? 0 : -1;
  uint8_t *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  if (size >= HEADER_BYTES && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) != NULL &&
      fread(buf, 1, (size_t)size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (!buf)
    return -1;
  uint8_t digest[32];
  size_t n = (size_t)size - HEADER_BYTES;
  int ok = memcmp(buf, ENTRY_MAGIC, 8) == 0 && get_le(buf + 8, 4) == ENTRY_VERSION && get_le(buf + 16, 8) == n &&
    memcmp(buf + 24, key, 32) == 0;
  if (ok) {
    nestcl_sha256_buffer(buf + HEADER_BYTES, n, digest);
    ok = memcmp(buf + 56, digest, 32) == 0;
  }
  if (!ok) {
    free(buf);
    return -1;
  }
  memmove(buf, buf + HEADER_BYTES, n);
  *payload = buf;
  *len = n;
  return 1;
}

/* Writes an entry to a private temporary file and renames it into place, so
 * that a concurrent reader sees either no entry or a whole one. */
static void write_entry(const char *dir, const char *path, const uint8_t key[32], const uint8_t *bin, size_t n)
{
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
  int fd = mkstemp(tmp);
  if (fd < 0)
    goto fail;
  uint8_t head[HEADER_BYTES] = {0};
  memcpy(head, ENTRY_MAGIC, 8);
  put_u32(head + 8, ENTRY_VERSION);
  put_u64(head + 16, n);
  memcpy(head + 24, key, 32);
  nestcl_sha256_buffer(bin, n, head + 56);
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(tmp);
    goto fail;
  }
  fchmod(fd, 0644); /* mkstemp makes 0600; a shared cache directory should stay readable */
  int ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(bin, 1, n, f) == n;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    goto fail;
  }
  return;
fail:
  if (nestcl_verbose())
    fprintf(stderr, "nestcl: could not write cache entry %s: %s\n", path, strerror(errno));
}

static void count(nestcl_device *dev, unsigned long *counter)
{
  pthread_mutex_lock(&dev->lock);
  (*counter)++;
  pthread_mutex_unlock(&dev->lock);
}

static int build_error(nestcl_device *dev, cl_program prog, cl_int err)
{
  size_t n = 0;
  char *log = NULL;
  if (clGetProgramBuildInfo(prog, dev->info.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
      (log = calloc(n + 1, 1)) != NULL)
    clGetProgramBuildInfo(prog, dev->info.device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
  size_t len = log ? strlen(log) : 0;
  while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == ' '))
    log[--len] = '\0';
  int rc = len ? nestcl_set_error(NESTCL_EBUILD, "device %s: clBuildProgram failed:\n%s", dev->info.device_name, log)
               : nestcl_set_error(NESTCL_EBUILD, "device %s: clBuildProgram failed:\n(no build log; %s)",
                                  dev->info.device_name, nestcl_cl_error_name(err));
  free(log);
  return rc;
}

/* The binary of a program built for this one device, malloc'ed. */
static uint8_t *program_binary(cl_program prog, size_t *n)
{
  *n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof *n, n, NULL) != CL_SUCCESS || *n == 0)
    return NULL;
  uint8_t *bin = malloc(*n);
  if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    free(bin);
    bin = NULL;
  }
  return bin;
}

/* Tries the binary; the program on success, NULL when the driver refuses it. */
static cl_program load_binary(nestcl_device *dev, const uint8_t *bin, size_t n, const char *options)
{
  cl_int err, status;
  cl_program prog = clCreateProgramWithBinary(dev->context, 1, &dev->info.device, &n, &bin, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (prog)
      clReleaseProgram(prog);
    return NULL;
  }
  if (clBuildProgram(prog, 1, &dev->info.device, options, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(prog);
    return NULL;
  }
  return prog;
}

int nestcl_program_build(nestcl_device *dev, const char *source, const char *options, cl_program *out)
{
  if (!dev || !source || !out)
    return nestcl_set_error(NESTCL_EINVAL, "nestcl_program_build: NULL argument");
  *out = NULL;
  if (!options)
    options = "";
  /* OpenCL C 1.2 everywhere unless the caller chose: drivers default to
   * different versions, and the kernels are written for 1.2. */
  size_t olen = strlen(options) + 32;
  char *opts = malloc(olen);
  if (!opts)
    return nestcl_set_error(NESTCL_ERUNTIME, "out of host memory");
  if (strstr(options, "-cl-std"))
    snprintf(opts, olen, "%s", options);
  else
    snprintf(opts, olen, "-cl-std=CL1.2%s%s", *options ? " " : "", options);

  uint8_t key[32];
  char hex[65], dir[4096], path[4200];
  entry_key(dev, source, opts, key);
  nestcl_sha256_hex(key, hex);
  int cached = cache_dir(dir, sizeof dir);
  if (cached)
    snprintf(path, sizeof path, "%s/%s.clbin", dir, hex);

  if (cached) {
    uint8_t *bin = NULL;
    size_t n = 0;
    int r = read_entry(path, key, &bin, &n);
    cl_program prog = r == 1 ? load_binary(dev, bin, n, opts) : NULL;
    free(bin);
    if (prog) {
      count(dev, &dev->cache.hits);
      if (nestcl_verbose())
        fprintf(stderr, "nestcl: cache hit %s (%s)\n", path, dev->info.device_name);
      free(opts);
      *out = prog;
      return 0;
    }
    if (r != 0) {
      count(dev, &dev->cache.corrupt);
      if (nestcl_verbose())
        fprintf(stderr, "nestcl: cache entry %s corrupt or refused by the driver; rebuilding\n", path);
    }
  }

  cl_int err;
  cl_program prog = clCreateProgramWithSource(dev->context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS) {
    free(opts);
    return nestcl_set_error(NESTCL_ECL, "device %s: clCreateProgramWithSource failed: %s (%d)", dev->info.device_name,
                            nestcl_cl_error_name(err), err);
  }
  err = clBuildProgram(prog, 1, &dev->info.device, opts, NULL, NULL);
  free(opts);
  if (err != CL_SUCCESS) {
    int rc = build_error(dev, prog, err);
    clReleaseProgram(prog);
    return rc;
  }
  count(dev, &dev->cache.misses);
  if (cached) {
    size_t n;
    uint8_t *bin = program_binary(prog, &n);
    int stored = bin != NULL;
    if (bin)
      write_entry(dir, path, key, bin, n);
    free(bin);
    if (nestcl_verbose())
      fprintf(stderr, "nestcl: cache miss %s (%s)%s\n", path, dev->info.device_name,
              stored ? "" : ", driver gave no binary to store");
  }
  *out = prog;
  return 0;
}

void nestcl_device_cache_stats(const nestcl_device *dev, nestcl_cache_stats *out)
{
  pthread_mutex_lock((pthread_mutex_t *)&dev->lock);
  *out = dev->cache;
  pthread_mutex_unlock((pthread_mutex_t *)&dev->lock);
}
