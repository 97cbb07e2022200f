/*
 * SHA-256 against the FIPS 180-2 / NIST known answers. The program cache
 * trusts this hash both to name entries and to detect damaged ones.
 */
#include <string.h>

#include "check.h"
#include "hash.h"

static void expect(const char *msg, size_t n, const char *hex_expected)
{
  uint8_t d[32];
  char hex[65];
  nestcl_sha256_buffer(msg, n, d);
  nestcl_sha256_hex(d, hex);
  if (strcmp(hex, hex_expected) != 0)
    fprintf(stderr, "sha256 of %zu bytes: %s\n  expected %s\n", n, hex, hex_expected);
  CHECK(strcmp(hex, hex_expected) == 0);
}

int main(void)
{
  expect("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  expect(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

  /* One million 'a', fed in odd-sized pieces to exercise the block buffering. */
  nestcl_sha256 s;
  nestcl_sha256_init(&s);
  static char a[1000000];
  memset(a, 'a', sizeof a);
  size_t done = 0, step = 1;
  while (done < sizeof a) {
    size_t take = sizeof a - done < step ? sizeof a - done : step;
    nestcl_sha256_update(&s, a + done, take);
    done += take;
    step = step * 7 % 1000 + 1;
  }
  uint8_t d[32];
  char hex[65];
  nestcl_sha256_final(&s, d);
  nestcl_sha256_hex(d, hex);
  CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
  printf("sha256 ok\n");
  return 0;
}
