/*
 * SHA-256, private to libnestcl. The program cache names its entries by the
 * hash of everything that determines a binary, and checks each entry's payload
 * with it; a cryptographic hash makes accidental key collisions a non-issue.
 */
#ifndef NESTCL_HASH_H
#define NESTCL_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct nestcl_sha256 {
  uint32_t h[8];
  uint64_t length; /* bytes hashed so far */
  uint8_t block[64];
  size_t fill; /* bytes waiting in block */
} nestcl_sha256;

void nestcl_sha256_init(nestcl_sha256 *s);
void nestcl_sha256_update(nestcl_sha256 *s, const void *data, size_t n);
void nestcl_sha256_final(nestcl_sha256 *s, uint8_t digest[32]);
/* One-shot digest of a buffer. */
void nestcl_sha256_buffer(const void *data, size_t n, uint8_t digest[32]);
/* Lower-case hex of a digest; hex must hold 65 bytes. */
void nestcl_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif
