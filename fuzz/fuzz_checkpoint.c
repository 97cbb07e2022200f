/*
 * libFuzzer target: the checkpoint reader (nestcl_engine_restore). Each input
 * is one rank file of a one-rank checkpoint of ckpt_net.h's network. Its two
 * CRC-32s are set to match the input (when the header is long enough to hold
 * them) so that mutations reach the parser behind the checksums rather than
 * stop there, as a corrupted file does (that refusal is engine_checkpoint's
 * test). The input is written as rank-0-of-1.nestcl-ckpt and restored into a
 * freshly described engine: a refusal must leave the engine unbuilt with a
 * message; an accepted file must simulate a super step. Anything else (a
 * crash, a sanitizer report, a hang, a leak, a refusal without a message) is a
 * finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_net.h"
#include "engine_internal.h"

static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
  for (int k = 0; k < 4; ++k)
    p[k] = (uint8_t)(v >> (8 * k));
}

static char dir[256];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/nestcl-fuzz-ckpt.%ld.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    if (!mkdtemp(dir))
      abort();
  }
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf)
    abort();
  memcpy(buf, data, size);
  if (size >= 128) {
    uint32_t H = rd32(buf + 12);
    if (H >= 128 && H <= size) {
      /* The reader's own CRC (checkpoint.c), over the spans docs/checkpoint-format.md names. */
      static uint32_t t[256];
      if (!t[1])
        eng_crc32_table(t);
      wr32(buf + 120, eng_crc32_update(t, 0, buf + H, size - H));
      wr32(buf + 124, eng_crc32_update(t, eng_crc32_update(t, 0, buf, 124), buf + 128, H - 128));
    }
  }
  char path[320];
  snprintf(path, sizeof path, "%s/rank-0-of-1.nestcl-ckpt", dir);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0)
    abort();
  free(buf);
  nestcl_engine *e = NULL;
  if (ckpt_net(&e))
    abort();
  int rc = nestcl_engine_restore(e, dir);
  if (rc) {
    const char *msg = nestcl_last_error();
    nestcl_engine_stats st;
    nestcl_engine_get_stats(e, &st);
    if (!msg || !*msg || st.steps != 0) {
      fprintf(stderr, "a refused checkpoint without a message, or the engine's clock moved (%lld steps)\n",
              (long long)st.steps);
      abort();
    }
  } else if (nestcl_engine_simulate(e, 1.5) != 0 && nestcl_last_error()[0] == 0) {
    abort();
  }
  nestcl_engine_destroy(e);
  return 0;
}
