#!/usr/bin/env python3
"""Prints the table of nestcl_libm.h: for i in 0..127, the tail and the scaled
bits of 2^(i/128), from their definition (mpmath at 300 bits): hi = 2^(i/128)
rounded to the nearest double, stored as its bits minus i << 45 (so that adding
k << 45 for k = 128 e + i puts back e and i), and tail = (2^(i/128) - hi) / hi
rounded to the nearest double. This is the table of the exp algorithm that
glibc 2.28+ uses (Szabolcs Nagy's, from Arm's optimized-routines); computed
here from the definition, it comes out bit for bit as theirs, which
tests/unit/test_numeric_libm.c proves through the results."""
import struct

import mpmath

mpmath.mp.prec = 300
N = 128


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


print("NESTCL_MATH_TABLE nestcl_u64 nestcl_libm_exp_tab[2 * NESTCL_LIBM_EXP_N] = {")
for i in range(N):
    v = mpmath.power(2, mpmath.mpf(i) / N)
    hi = float(v)  # mpmath's float() rounds to nearest
    tail = float((v - mpmath.mpf(hi)) / mpmath.mpf(hi))
    print("  NESTCL_U64_C(0x%016x), NESTCL_U64_C(0x%016x)," % (bits(tail), (bits(hi) - (i << 45)) % (1 << 64)))
print("};")
