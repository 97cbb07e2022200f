/*
 * nestcl_math.h: the transcendental functions that translated update() bodies
 * and the runtime headers call (exp, expm1, log, log1p, pow), written once and
 * compiled both as C11 and as OpenCL C 1.2. libm and the OpenCL built-ins are
 * each within an ulp or so of the true value but not equal to one another, so a
 * model that called them would take different bits on a CPU VP and on a GPU VP
 * and break the invariant of docs/architecture.md, "Determinism and random numbers". These versions
 * use only + - * /, comparisons, integer
 * conversion and exact reinterpretation of bits, all of which give the same
 * result in both languages and on every IEEE device (no fma: the C path is
 * built with -ffp-contract=off and the OpenCL text sets FP_CONTRACT OFF, and
 * Dekker's exact product below depends on that).
 *
 * Methods (all sums that matter are carried as double-double, hi + lo):
 *   exp    x = (128 e + j) ln2/128 + r with ln2/128 in two parts (Cody and
 *          Waite; the first has 29 bits, so k times it is exact), |r| <= 0.0028,
 *          exp(x) = 2^e 2^(j/128) exp(r), 2^(j/128) from a table as hi + lo,
 *          exp(r) - 1 by its Taylor polynomial to r^6 (Horner). Subnormal
 *          results are rounded once (the 1.0 + trick in nestcl_math_exp_core).
 *   expm1  the same reduction; 2^e T (1 + p) - 1 with T r formed exactly
 *          (Dekker) and the subtraction of 1 in two-sums, so no cancellation
 *          loses bits near 0 or near -1.
 *   log    the single-double version kept from nestcl_philox.h (atanh series;
 *          the RNG's normal draws depend on its exact bits).
 *   log1p, pow  through nestcl_math_log_dd: x = 2^k m, m in [sqrt(1/2), sqrt(2)),
 *          c = i/128 nearest to m, log m = log c + log1p((m - c)/c), the
 *          quotient as double-double and its series to z^11 with the z^2 term
 *          exact; log c from a table as hi + lo. Relative error below 2^-68.
 *          log1p adds the rounding error of 1 + x; pow is exp(y log|x|) with
 *          the product and the reduction carried in double-double.
 * Tables: rounded to nearest from 300-bit values (Python mpmath, hi = the
 * double nearest the value, lo = the double nearest the rest);
 * tests/unit/test_numeric_math.c checks them against long double.
 *
 * Accuracy, measured by tests/unit/test_numeric_math.c on about 10^6
 * arguments per function over the whole range (subnormal results included),
 * as the largest error against long double references and the share of
 * results that differ from glibc 2.36 (never by more than 1 ulp):
 *   nestcl_exp    0.507 ulp   0.07% differ (glibc's own: 0.507 ulp)
 *   nestcl_expm1  0.503 ulp   5.1%  differ (glibc's own: 0.86 ulp)
 *   nestcl_log1p  0.500 ulp   1.6%  differ (glibc's own: 0.82 ulp)
 *   nestcl_pow    0.506 ulp   0.12% differ (glibc's own: 0.508 ulp)
 *   nestcl_log    within 1 ulp, 7% differ (single-double, kept as it was)
 * The analysis bounds the extra error beyond the final rounding by about
 * 0.01 ulp (0.03 for pow near the overflow edge), so the largest errors are
 * just above 0.5 ulp, and exact results (2^n, 10^n, pow(x, 1)) come out exact.
 * Special values follow C99 Annex F (exp(+-0) = 1, expm1(-0) = -0, log1p(-1) = -inf,
 * pow(-0, -3) = -inf, pow(-1, inf) = 1, pow(x, NaN) = NaN except pow(1, y) and
 * pow(x, 0), ...). A NaN argument is returned as it came (same bits); a NaN
 * made here is the positive quiet NaN 0x7ff8000000000000, so even NaNs match
 * bit for bit across devices.
 */
#ifndef NESTCL_MATH_H
#define NESTCL_MATH_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_types.h"
#endif

/* Program-scope tables: __constant in OpenCL; static in C so that every translation unit may include this. */
#ifdef __OPENCL_C_VERSION__
#define NESTCL_MATH_TABLE __constant
#else
#define NESTCL_MATH_TABLE static const
#endif

#define NESTCL_MATH_QNAN nestcl_bits_f64(NESTCL_U64_C(0x7ff8000000000000))
#define NESTCL_MATH_INF nestcl_bits_f64(NESTCL_U64_C(0x7ff0000000000000))

/* An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2. */
typedef struct nestcl_dd {
  double hi;
  double lo;
} nestcl_dd;

/* a + b exactly, when |a| >= |b| or a == 0 (Dekker's Fast2Sum). */
NESTCL_INLINE nestcl_dd nestcl_dd_fast_two_sum(double a, double b)
{
  nestcl_dd r;
  r.hi = a + b;
  r.lo = b - (r.hi - a);
  return r;
}

/* a + b exactly, any order of magnitude (Knuth's TwoSum). */
NESTCL_INLINE nestcl_dd nestcl_dd_two_sum(double a, double b)
{
  nestcl_dd r;
  r.hi = a + b;
  double bb = r.hi - a;
  r.lo = (a - (r.hi - bb)) + (b - bb);
  return r;
}

/*
 * a * b exactly without fma (Veltkamp's split into 26-bit halves and Dekker's
 * product); needs |a|, |b| < 2^995 so that the split does not overflow.
 */
NESTCL_INLINE nestcl_dd nestcl_dd_two_prod(double a, double b)
{
  const double split = 134217729.0; /* 2^27 + 1 */
  double ca = split * a;
  double ah = ca - (ca - a);
  double al = a - ah;
  double cb = split * b;
  double bh = cb - (cb - b);
  double bl = b - bh;
  nestcl_dd r;
  r.hi = a * b;
  r.lo = (((ah * bh - r.hi) + ah * bl) + al * bh) + al * bl;
  return r;
}

/* 2^(j/128) for j = 0..127 as (hi, lo). */
NESTCL_MATH_TABLE double nestcl_math_exp2_table[256] = {
  0x1.0000000000000p+0, 0x0.0p+0, /* 0 */
  0x1.0163da9fb3335p+0, 0x1.b61299ab8cdb7p-54, /* 1 */
  0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56, /* 2 */
  0x1.04315e86e7f85p+0, -0x1.0a31c1977c96ep-54, /* 3 */
  0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55, /* 4 */
  0x1.0706b29ddf6dep+0, -0x1.c91dfe2b13c27p-55, /* 5 */
  0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57, /* 6 */
  0x1.09e3ecac6f383p+0, 0x1.1487818316136p-54, /* 7 */
  0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54, /* 8 */
  0x1.0cc922b7247f7p+0, 0x1.01edc16e24f71p-54, /* 9 */
  0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59, /* 10 */
  0x1.0fb66affed31bp+0, -0x1.b9bedc44ebd7bp-57, /* 11 */
  0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54, /* 12 */
  0x1.12abdc06c31ccp+0, -0x1.1b514b36ca5c7p-58, /* 13 */
  0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54, /* 14 */
  0x1.15a98c8a58e51p+0, 0x1.2406ab9eeab0ap-55, /* 15 */
  0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55, /* 16 */
  0x1.18af9388c8deap+0, -0x1.11023d1970f6cp-54, /* 17 */
  0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55, /* 18 */
  0x1.1bbe084045cd4p+0, -0x1.95386352ef607p-54, /* 19 */
  0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54, /* 20 */
  0x1.1ed5022fcd91dp+0, -0x1.1df98027bb78cp-54, /* 21 */
  0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55, /* 22 */
  0x1.21f49917ddc96p+0, 0x1.2a97e9494a5eep-55, /* 23 */
  0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54, /* 24 */
  0x1.251ce4fb2a63fp+0, 0x1.ac155bef4f4a4p-55, /* 25 */
  0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55, /* 26 */
  0x1.284dfe1f56381p+0, -0x1.a4c3a8c3f0d7ep-54, /* 27 */
  0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55, /* 28 */
  0x1.2b87fd0dad990p+0, -0x1.10adcd6381aa4p-59, /* 29 */
  0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54, /* 30 */
  0x1.2ecafa93e2f56p+0, 0x1.1ca0f45d52383p-56, /* 31 */
  0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55, /* 32 */
  0x1.32170fc4cd831p+0, 0x1.a9ce78e18047cp-55, /* 33 */
  0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54, /* 34 */
  0x1.356c55f929ff1p+0, -0x1.b5cee5c4e4628p-55, /* 35 */
  0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54, /* 36 */
  0x1.38cae6d05d866p+0, -0x1.e958d3c9904bdp-54, /* 37 */
  0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56, /* 38 */
  0x1.3c32dc313a8e5p+0, -0x1.efff8375d29c3p-54, /* 39 */
  0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55, /* 40 */
  0x1.3fa4504ac801cp+0, -0x1.7d023f956f9f3p-54, /* 41 */
  0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58, /* 42 */
  0x1.431f5d950a897p+0, -0x1.1c7dde35f7999p-55, /* 43 */
  0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59, /* 44 */
  0x1.46a41ed1d0057p+0, 0x1.c944bd1648a76p-54, /* 45 */
  0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56, /* 46 */
  0x1.4a32af0d7d3dep+0, 0x1.9cb62f3d1be56p-54, /* 47 */
  0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56, /* 48 */
  0x1.4dcb299fddd0dp+0, 0x1.8ecdbbc6a7833p-54, /* 49 */
  0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54, /* 50 */
  0x1.516daa2cf6642p+0, -0x1.f768569bd93efp-55, /* 51 */
  0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55, /* 52 */
  0x1.551a4ca5d920fp+0, -0x1.d689cefede59bp-55, /* 53 */
  0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54, /* 54 */
  0x1.58d12d497c7fdp+0, 0x1.295e15b9a1de8p-55, /* 55 */
  0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54, /* 56 */
  0x1.5c9268a5946b7p+0, 0x1.c4b1b816986a2p-60, /* 57 */
  0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54, /* 58 */
  0x1.605e1b976dc09p+0, -0x1.3e2429b56de47p-54, /* 59 */
  0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54, /* 60 */
  0x1.6434634ccc320p+0, -0x1.c483c759d8933p-55, /* 61 */
  0x1.6623882552225p+0, -0x1.bb60987591c34p-54, /* 62 */
  0x1.68155d44ca973p+0, 0x1.038ae44f73e65p-57, /* 63 */
  0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54, /* 64 */
  0x1.6c012750bdabfp+0, -0x1.2895667ff0b0dp-56, /* 65 */
  0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57, /* 66 */
  0x1.6ff7df9519484p+0, -0x1.83c0f25860ef6p-55, /* 67 */
  0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55, /* 68 */
  0x1.73f9a48a58174p+0, -0x1.0a8d96c65d53cp-54, /* 69 */
  0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54, /* 70 */
  0x1.780694fde5d3fp+0, 0x1.866b80a02162dp-54, /* 71 */
  0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55, /* 72 */
  0x1.7c1ed0130c132p+0, 0x1.f124cd1164dd6p-54, /* 73 */
  0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56, /* 74 */
  0x1.80427543e1a12p+0, -0x1.27c86626d972bp-54, /* 75 */
  0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54, /* 76 */
  0x1.8471a4623c7adp+0, -0x1.8d684a341cdfbp-55, /* 77 */
  0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54, /* 78 */
  0x1.88ac7d98a6699p+0, 0x1.994c2f37cb53ap-54, /* 79 */
  0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54, /* 80 */
  0x1.8cf3216b5448cp+0, -0x1.0d55e32e9e3aap-56, /* 81 */
  0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55, /* 82 */
  0x1.9145b0b91ffc6p+0, -0x1.dd6792e582524p-54, /* 83 */
  0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57, /* 84 */
  0x1.95a44cbc8520fp+0, -0x1.64b7c96a5f039p-56, /* 85 */
  0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54, /* 86 */
  0x1.9a0f170ca07bap+0, -0x1.173bd91cee632p-54, /* 87 */
  0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56, /* 88 */
  0x1.9e86319e32323p+0, 0x1.824ca78e64c6ep-56, /* 89 */
  0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54, /* 90 */
  0x1.a309bec4a2d33p+0, 0x1.6305c7ddc36abp-54, /* 91 */
  0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54, /* 92 */
  0x1.a799e1330b358p+0, 0x1.bcb7ecac563c7p-54, /* 93 */
  0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54, /* 94 */
  0x1.ac36bbfd3f37ap+0, -0x1.f9234cae76cd0p-55, /* 95 */
  0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54, /* 96 */
  0x1.b0e07298db666p+0, -0x1.bdef54c80e425p-54, /* 97 */
  0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57, /* 98 */
  0x1.b59728de5593ap+0, -0x1.c71dfbbba6de3p-54, /* 99 */
  0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56, /* 100 */
  0x1.ba5b030a1064ap+0, -0x1.efcd30e54292ep-54, /* 101 */
  0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55, /* 102 */
  0x1.bf2c25bd71e09p+0, -0x1.efdca3f6b9c73p-54, /* 103 */
  0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55, /* 104 */
  0x1.c40ab5fffd07ap+0, 0x1.b4537e083c60ap-54, /* 105 */
  0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54, /* 106 */
  0x1.c8f6d9406e7b5p+0, 0x1.1acbc48805c44p-56, /* 107 */
  0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56, /* 108 */
  0x1.cdf0b555dc3fap+0, -0x1.dd83b53829d72p-55, /* 109 */
  0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54, /* 110 */
  0x1.d2f87080d89f2p+0, -0x1.d487b719d8578p-54, /* 111 */
  0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55, /* 112 */
  0x1.d80e316c98398p+0, -0x1.11ec18beddfe8p-54, /* 113 */
  0x1.da9e603db3285p+0, 0x1.c2300696db532p-54, /* 114 */
  0x1.dd321f301b460p+0, 0x1.2da5778f018c3p-54, /* 115 */
  0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54, /* 116 */
  0x1.e264614f5a129p+0, -0x1.7b627817a1496p-54, /* 117 */
  0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55, /* 118 */
  0x1.e7a51fbc74c83p+0, 0x1.2d522ca0c8de2p-54, /* 119 */
  0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54, /* 120 */
  0x1.ecf482d8e67f1p+0, -0x1.c93f3b411ad8cp-54, /* 121 */
  0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54, /* 122 */
  0x1.f252b376bba97p+0, 0x1.3a1a5bf0d8e43p-54, /* 123 */
  0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54, /* 124 */
  0x1.f7bfdad9cbe14p+0, -0x1.dbb12d006350ap-54, /* 125 */
  0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55, /* 126 */
  0x1.fd3c22b8f71f1p+0, 0x1.2eb74966579e7p-57, /* 127 */
};

/* log(i/128) for i = 91..181 as (hi, lo); i = 128 is exactly 0. */
NESTCL_MATH_TABLE double nestcl_math_log_table[182] = {
  -0x1.5d5bddf595f30p-2,
  0x1.6541148cbb8a2p-56, /* 91 */
  -0x1.522ae0738a3d8p-2,
  0x1.8f7e9b38a6979p-57, /* 92 */
  -0x1.4718dc271c41bp-2,
  -0x1.8fb4c14c56eefp-60, /* 93 */
  -0x1.3c25277333184p-2,
  0x1.2ad27e50a8ec6p-56, /* 94 */
  -0x1.314f1e1d35ce4p-2,
  0x1.3d69909e5c3dcp-56, /* 95 */
  -0x1.269621134db92p-2,
  -0x1.e0efadd9db02bp-56, /* 96 */
  -0x1.1bf99635a6b95p-2,
  0x1.12aeb84249223p-57, /* 97 */
  -0x1.1178e8227e47cp-2,
  0x1.0e63a5f01c691p-57, /* 98 */
  -0x1.07138604d5862p-2,
  -0x1.cdb16ed4e9138p-56, /* 99 */
  -0x1.f991c6cb3b379p-3,
  -0x1.f665066f980a2p-57, /* 100 */
  -0x1.e530effe71012p-3,
  -0x1.2276041f43042p-59, /* 101 */
  -0x1.d1037f2655e7bp-3,
  -0x1.60629242471a2p-57, /* 102 */
  -0x1.bd087383bd8adp-3,
  -0x1.dd355f6a516d7p-60, /* 103 */
  -0x1.a93ed3c8ad9e3p-3,
  -0x1.bcafa9de97203p-57, /* 104 */
  -0x1.95a5adcf7017fp-3,
  -0x1.142c507fb7a3dp-58, /* 105 */
  -0x1.823c16551a3c2p-3,
  0x1.1232ce70be781p-57, /* 106 */
  -0x1.6f0128b756abcp-3,
  0x1.8de59c21e166cp-57, /* 107 */
  -0x1.5bf406b543db2p-3,
  0x1.1f5b44c0df7e7p-61, /* 108 */
  -0x1.4913d8333b561p-3,
  0x1.0d5604930f135p-58, /* 109 */
  -0x1.365fcb0159016p-3,
  -0x1.7d411a5b944adp-58, /* 110 */
  -0x1.23d712a49c202p-3,
  0x1.6e38161051d69p-57, /* 111 */
  -0x1.1178e8227e47cp-3,
  0x1.0e63a5f01c691p-58, /* 112 */
  -0x1.fe89139dbd566p-4,
  0x1.ac9f4215f9393p-58, /* 113 */
  -0x1.da727638446a2p-4,
  -0x1.401fa71733019p-58, /* 114 */
  -0x1.b6ac88dad5b1cp-4,
  0x1.0057eed1ca59fp-59, /* 115 */
  -0x1.9335e5d594989p-4,
  0x1.478a85704ccb7p-58, /* 116 */
  -0x1.700d30aeac0e1p-4,
  0x1.72566212cdd05p-61, /* 117 */
  -0x1.4d3115d207eacp-4,
  -0x1.769f42c7842ccp-58, /* 118 */
  -0x1.2aa04a44717a5p-4,
  0x1.d15d38d2fa3f7p-58, /* 119 */
  -0x1.08598b59e3a07p-4,
  0x1.dd7009902bf32p-58, /* 120 */
  -0x1.ccb73cdddb2ccp-5,
  0x1.e48fb0500efd4p-59, /* 121 */
  -0x1.894aa149fb343p-5,
  -0x1.a8be97660a23dp-60, /* 122 */
  -0x1.466aed42de3eap-5,
  0x1.cdd6f7f4a137ep-59, /* 123 */
  -0x1.0415d89e74444p-5,
  -0x1.c05cf1d753622p-59, /* 124 */
  -0x1.8492528c8cabfp-6,
  0x1.d192d0619fa67p-60, /* 125 */
  -0x1.0205658935847p-6,
  -0x1.27c8e8416e71fp-60, /* 126 */
  -0x1.010157588de71p-7,
  -0x1.46662d417ced0p-62, /* 127 */
  0x0.0p+0,
  0x0.0p+0, /* 128 */
  0x1.fe02a6b106789p-8,
  -0x1.e44b7e3711ebfp-67, /* 129 */
  0x1.fc0a8b0fc03e4p-7,
  -0x1.83092c59642a1p-62, /* 130 */
  0x1.7b91b07d5b11bp-6,
  -0x1.5b602ace3a510p-60, /* 131 */
  0x1.f829b0e783300p-6,
  0x1.33e3f04f1ef23p-60, /* 132 */
  0x1.39e87b9febd60p-5,
  -0x1.5bfa937f551bbp-59, /* 133 */
  0x1.77458f632dcfcp-5,
  0x1.18d3ca87b9296p-59, /* 134 */
  0x1.b42dd711971bfp-5,
  -0x1.eb9759c130499p-60, /* 135 */
  0x1.f0a30c01162a6p-5,
  0x1.85f325c5bbacdp-59, /* 136 */
  0x1.16536eea37ae1p-4,
  -0x1.79da3e8c22cdap-60, /* 137 */
  0x1.341d7961bd1d1p-4,
  -0x1.b599f227becbbp-58, /* 138 */
  0x1.51b073f06183fp-4,
  0x1.a49e39a1a8be4p-58, /* 139 */
  0x1.6f0d28ae56b4cp-4,
  -0x1.906d99184b992p-58, /* 140 */
  0x1.8c345d6319b21p-4,
  -0x1.4a697ab3424a9p-61, /* 141 */
  0x1.a926d3a4ad563p-4,
  0x1.942f48aa70ea9p-58, /* 142 */
  0x1.c5e548f5bc743p-4,
  0x1.5d617ef8161b1p-60, /* 143 */
  0x1.e27076e2af2e6p-4,
  -0x1.61578001e0162p-60, /* 144 */
  0x1.fec9131dbeabbp-4,
  -0x1.5746b9981b36cp-58, /* 145 */
  0x1.0d77e7cd08e59p-3,
  0x1.9a5dc5e9030acp-57, /* 146 */
  0x1.1b72ad52f67a0p-3,
  0x1.483023472cd74p-58, /* 147 */
  0x1.29552f81ff523p-3,
  0x1.301771c407dbfp-57, /* 148 */
  0x1.371fc201e8f74p-3,
  0x1.de6cb62af18a0p-58, /* 149 */
  0x1.44d2b6ccb7d1ep-3,
  0x1.9f4f6543e1f88p-57, /* 150 */
  0x1.526e5e3a1b438p-3,
  -0x1.746ff8a470d3ap-57, /* 151 */
  0x1.5ff3070a793d4p-3,
  -0x1.bc60efafc6f6ep-58, /* 152 */
  0x1.6d60fe719d21dp-3,
  -0x1.caae268ecd179p-57, /* 153 */
  0x1.7ab890210d909p-3,
  0x1.be36b2d6a0608p-59, /* 154 */
  0x1.87fa06520c911p-3,
  -0x1.bf7fdbfa08d9ap-57, /* 155 */
  0x1.9525a9cf456b4p-3,
  0x1.d904c1d4e2e26p-57, /* 156 */
  0x1.a23bc1fe2b563p-3,
  0x1.93711b07a998cp-59, /* 157 */
  0x1.af3c94e80bff3p-3,
  -0x1.398cff3641985p-58, /* 158 */
  0x1.bc286742d8cd6p-3,
  0x1.4fce744870f55p-58, /* 159 */
  0x1.c8ff7c79a9a22p-3,
  -0x1.4f689f8434012p-57, /* 160 */
  0x1.d5c216b4fbb91p-3,
  0x1.6e443597e4d40p-57, /* 161 */
  0x1.e27076e2af2e6p-3,
  -0x1.61578001e0162p-59, /* 162 */
  0x1.ef0adcbdc5936p-3,
  0x1.48637950dc20dp-57, /* 163 */
  0x1.fb9186d5e3e2bp-3,
  -0x1.caaae64f21acbp-57, /* 164 */
  0x1.0402594b4d041p-2,
  -0x1.28ec217a5022dp-57, /* 165 */
  0x1.0a324e27390e3p-2,
  0x1.7dcfde8061c03p-56, /* 166 */
  0x1.1058bf9ae4ad5p-2,
  0x1.89fa0ab4cb31dp-58, /* 167 */
  0x1.1675cababa60ep-2,
  0x1.ce63eab883717p-61, /* 168 */
  0x1.1c898c16999fbp-2,
  -0x1.0e5c62aff1c44p-60, /* 169 */
  0x1.22941fbcf7966p-2,
  -0x1.76f5eb09628afp-56, /* 170 */
  0x1.2895a13de86a3p-2,
  0x1.7ad24c13f040ep-56, /* 171 */
  0x1.2e8e2bae11d31p-2,
  -0x1.8f4cdb95ebdf9p-56, /* 172 */
  0x1.347dd9a987d55p-2,
  -0x1.4dd4c580919f8p-57, /* 173 */
  0x1.3a64c556945eap-2,
  -0x1.c68651945f97cp-57, /* 174 */
  0x1.404308686a7e4p-2,
  -0x1.0bcfb6082ce6dp-56, /* 175 */
  0x1.4618bc21c5ec2p-2,
  0x1.f42decdeccf1dp-56, /* 176 */
  0x1.4be5f957778a1p-2,
  -0x1.259b35b04813dp-57, /* 177 */
  0x1.51aad872df82dp-2,
  0x1.3927ac19f55e3p-59, /* 178 */
  0x1.5767717455a6cp-2,
  0x1.526adb283660cp-56, /* 179 */
  0x1.5d1bdbf5809cap-2,
  0x1.4236383dc7fe1p-56, /* 180 */
  0x1.62c82f2b9c795p-2,
  0x1.7b7af915300e5p-57, /* 181 */
};

/* 128 / i, rounded to nearest, for i = 91..181: f / c by a product instead of a division. */
NESTCL_MATH_TABLE double nestcl_math_inv_table[91] = {
  0x1.6816816816817p+0, 0x1.642c8590b2164p+0, 0x1.6058160581606p+0, 0x1.5c9882b931057p+0, 0x1.58ed2308158edp+0,
  0x1.5555555555555p+0, 0x1.51d07eae2f815p+0, 0x1.4e5e0a72f0539p+0, 0x1.4afd6a052bf5bp+0, 0x1.47ae147ae147bp+0,
  0x1.446f86562d9fbp+0, 0x1.4141414141414p+0, 0x1.3e22cbce4a902p+0, 0x1.3b13b13b13b14p+0, 0x1.3813813813814p+0,
  0x1.3521cfb2b78c1p+0, 0x1.323e34a2b10bfp+0, 0x1.2f684bda12f68p+0, 0x1.2c9fb4d812ca0p+0, 0x1.29e4129e4129ep+0,
  0x1.27350b8812735p+0, 0x1.2492492492492p+0, 0x1.21fb78121fb78p+0, 0x1.1f7047dc11f70p+0, 0x1.1cf06ada2811dp+0,
  0x1.1a7b9611a7b96p+0, 0x1.1811811811812p+0, 0x1.15b1e5f75270dp+0, 0x1.135c81135c811p+0, 0x1.1111111111111p+0,
  0x1.0ecf56be69c90p+0, 0x1.0c9714fbcda3bp+0, 0x1.0a6810a6810a7p+0, 0x1.0842108421084p+0, 0x1.0624dd2f1a9fcp+0,
  0x1.0410410410410p+0, 0x1.0204081020408p+0, 0x1.0000000000000p+0, 0x1.fc07f01fc07f0p-1, 0x1.f81f81f81f820p-1,
  0x1.f44659e4a4271p-1, 0x1.f07c1f07c1f08p-1, 0x1.ecc07b301ecc0p-1, 0x1.e9131abf0b767p-1, 0x1.e573ac901e574p-1,
  0x1.e1e1e1e1e1e1ep-1, 0x1.de5d6e3f8868ap-1, 0x1.dae6076b981dbp-1, 0x1.d77b654b82c34p-1, 0x1.d41d41d41d41dp-1,
  0x1.d0cb58f6ec074p-1, 0x1.cd85689039b0bp-1, 0x1.ca4b3055ee191p-1, 0x1.c71c71c71c71cp-1, 0x1.c3f8f01c3f8f0p-1,
  0x1.c0e070381c0e0p-1, 0x1.bdd2b899406f7p-1, 0x1.bacf914c1bad0p-1, 0x1.b7d6c3dda338bp-1, 0x1.b4e81b4e81b4fp-1,
  0x1.b2036406c80d9p-1, 0x1.af286bca1af28p-1, 0x1.ac5701ac5701bp-1, 0x1.a98ef606a63bep-1, 0x1.a6d01a6d01a6dp-1,
  0x1.a41a41a41a41ap-1, 0x1.a16d3f97a4b02p-1, 0x1.9ec8e951033d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.999999999999ap-1,
  0x1.970e4f80cb872p-1, 0x1.948b0fcd6e9e0p-1, 0x1.920fb49d0e229p-1, 0x1.8f9c18f9c18fap-1, 0x1.8d3018d3018d3p-1,
  0x1.8acb90f6bf3aap-1, 0x1.886e5f0abb04ap-1, 0x1.8618618618618p-1, 0x1.83c977ab2beddp-1, 0x1.8181818181818p-1,
  0x1.7f405fd017f40p-1, 0x1.7d05f417d05f4p-1, 0x1.7ad2208e0ecc3p-1, 0x1.78a4c8178a4c8p-1, 0x1.767dce434a9b1p-1,
  0x1.745d1745d1746p-1, 0x1.724287f46debcp-1, 0x1.702e05c0b8170p-1, 0x1.6e1f76b4337c7p-1, 0x1.6c16c16c16c17p-1,
  0x1.6a13cd1537290p-1,
};

/* 128 / ln 2, and ln2 / 128 = C1 + C2 with C1 of 29 bits: k C1 is exact for |k| < 2^24. */
#define NESTCL_MATH_INV_LN2_128 0x1.71547652b82fep+7
#define NESTCL_MATH_LN2_128_C1 0x1.62e42ffp-8
#define NESTCL_MATH_LN2_128_C2 -0x1.718432a1b0e26p-42
/* ln 2 = LN2HI + LN2LO with LN2HI of 41 bits: k LN2HI is exact for |k| < 2^12. */
#define NESTCL_MATH_LN2HI 0x1.62e42fefa38p-1
#define NESTCL_MATH_LN2LO 0x1.ef35793c7673p-45
/* Adding and subtracting 1.5 * 2^52 rounds a double below 2^51 to an integer. */
#define NESTCL_MATH_ROUND_SHIFT 0x1.8p52
/* exp overflows above this and underflows to 0 below the next (ln DBL_MAX = 709.7827, ln 2^-1075 = -745.1332). */
#define NESTCL_MATH_EXP_OVERFLOW 709.79
#define NESTCL_MATH_EXP_UNDERFLOW -745.2

/* 2^e for -1022 <= e <= 1023, from its bits. */
NESTCL_INLINE double nestcl_math_pow2(nestcl_i32 e)
{
  return nestcl_bits_f64((nestcl_u64)(nestcl_i64)(e + 1023) << 52);
}

/*
 * exp(xh + xl) for EXP_UNDERFLOW <= xh <= EXP_OVERFLOW and |xl| well below an
 * ulp of xh; rounds to inf or to 0 by itself near the ends. Shared by exp and
 * pow (which passes the low part of y log x).
 */
NESTCL_INLINE double nestcl_math_exp_core(double xh, double xl)
{
  double kd = (xh * NESTCL_MATH_INV_LN2_128 + NESTCL_MATH_ROUND_SHIFT) - NESTCL_MATH_ROUND_SHIFT;
  nestcl_i32 k = (nestcl_i32)kd;
  double rh = xh - kd * NESTCL_MATH_LN2_128_C1; /* exact: see C1 */
  double r = rh + (xl - kd * NESTCL_MATH_LN2_128_C2);
  nestcl_i32 j = k & 127;
  nestcl_i32 e = (k - j) / 128; /* floor(k / 128), also for negative k */
  double th = nestcl_math_exp2_table[2 * j];
  double tl = nestcl_math_exp2_table[2 * j + 1];
  /* exp(r) - 1; the first omitted term, r^7/7!, is below 2^-72. */
  double q = 1.0 / 720.0;
  q = 1.0 / 120.0 + r * q;
  q = 1.0 / 24.0 + r * q;
  q = 1.0 / 6.0 + r * q;
  q = 0.5 + r * q;
  double p = r + (r * r) * q;
  /* T exp(r) = th + (tl + th p) with everything after th below 0.6% of it. */
  double tmp = tl + th * p;
  if (e > -1022) {
    double y = th + tmp;
    if (e <= 1023) {
      return y * nestcl_math_pow2(e);
    }
    return (y * nestcl_math_pow2(e - 1)) * 2.0; /* 2^1024 itself is not a double; overflows to inf as it should */
  }
  /*
   * The result may be subnormal. Rounding y and then scaling it would round
   * twice; instead a + b (the result times 2^1022, below 1) is added to 1.0,
   * whose ulp is 2^-52, the subnormal ulp times 2^1022, so the one rounding
   * of h + (l + b) is the rounding to the subnormal grid. a, b: exact scalings.
   */
  double s = nestcl_math_pow2(e + 1022);
  double a = s * th;
  double b = s * tmp;
  if (a + b >= 1.0) {
    return (a + b) * 0x1p-1022;
  }
  double h = 1.0 + a;
  double l = (1.0 - h) + a; /* exact: Fast2Sum, 1 >= a */
  double v = h + (l + b);
  return (v - 1.0) * 0x1p-1022; /* both exact */
}

/* e^x. */
NESTCL_INLINE double nestcl_exp(double x)
{
  if (!(x == x)) {
    return x;
  }
  if (x > NESTCL_MATH_EXP_OVERFLOW) {
    return NESTCL_MATH_INF;
  }
  if (x < NESTCL_MATH_EXP_UNDERFLOW) {
    return 0.0;
  }
  if (x < 0x1p-54 && x > -0x1p-54) {
    return 1.0 + x; /* 1 is the correctly rounded result: x^2/2 and beyond are far below an ulp */
  }
  return nestcl_math_exp_core(x, 0.0);
}

/* e^x - 1, accurate near 0 as well. */
NESTCL_INLINE double nestcl_expm1(double x)
{
  if (!(x == x)) {
    return x;
  }
  if (x > 709.0) {
    return nestcl_exp(x); /* the -1 is 2^-1000 of an ulp */
  }
  if (x < -40.0) {
    return -1.0; /* e^x < 2^-57 is below half an ulp of 1 */
  }
  if (x < 0x1p-54 && x > -0x1p-54) {
    return x; /* x^2/2 is below half an ulp of x; keeps -0 */
  }
  double kd = (x * NESTCL_MATH_INV_LN2_128 + NESTCL_MATH_ROUND_SHIFT) - NESTCL_MATH_ROUND_SHIFT;
  nestcl_i32 k = (nestcl_i32)kd;
  double rh = x - kd * NESTCL_MATH_LN2_128_C1; /* exact */
  double rl = -(kd * NESTCL_MATH_LN2_128_C2);
  double r = rh + rl;
  nestcl_i32 j = k & 127;
  nestcl_i32 e = (k - j) / 128; /* -58 <= e <= 1022 here */
  double th = nestcl_math_exp2_table[2 * j];
  double tl = nestcl_math_exp2_table[2 * j + 1];
  double q = 1.0 / 720.0;
  q = 1.0 / 120.0 + r * q;
  q = 1.0 / 24.0 + r * q;
  q = 1.0 / 6.0 + r * q;
  q = 0.5 + r * q;
  double p2 = (r * r) * q; /* exp(r) - 1 - r */
  /*
   * T exp(r) = th + th rh + small with th rh exact (ph + pl), so that the
   * large parts of 2^e T exp(r) - 1 cancel exactly in the two-sums; only
   * small, at most 2^-17 of the result, is rounded.
   */
  nestcl_dd ph = nestcl_dd_two_prod(th, rh);
  double small = (tl + tl * (r + p2)) + th * (rl + p2);
  double s = nestcl_math_pow2(e);
  nestcl_dd s1 = nestcl_dd_two_sum(s * th, -1.0);
  nestcl_dd s2 = nestcl_dd_two_sum(s1.hi, s * ph.hi);
  return s2.hi + ((s1.lo + s2.lo) + s * (ph.lo + small));
}

/*
 * Natural logarithm from + - * / only. x = 2^k * m with m in [sqrt(1/2), sqrt(2))
 * taken from the bits; log(m) = log(1 + f) = 2 atanh(s) with s = f / (2 + f),
 * |s| <= 0.1716, evaluated as f - (f^2/2 - s (f^2/2 + R(s^2))) so that the
 * large terms are exact and the rounding errors sit in the small correction;
 * R is the atanh series 2/3 z + 2/5 z^2 + ... + 2/23 z^11, whose truncation
 * error is below 2^-58 relative. k ln 2 is split into an exact part (ln2_hi has
 * 21 significant bits) and a small one. Measured against glibc's log: at most
 * 1 ulp (tests/unit/test_numeric_philox.c). Moved here from nestcl_philox.h
 * with its arithmetic unchanged, because the normal draws depend on its exact
 * bits; only its NaN is now the canonical one.
 */
NESTCL_INLINE double nestcl_log(double x)
{
  if (!(x > 0.0)) {
    /* NaN for NaN input too, and the same NaN on every path (NAN's bits may differ) */
    return x == 0.0 ? -NESTCL_MATH_INF : NESTCL_MATH_QNAN;
  }
  if (x == NESTCL_MATH_INF) {
    return x;
  }
  nestcl_i32 k = 0;
  nestcl_u64 bits = nestcl_f64_bits(x);
  if (bits < NESTCL_U64_C(0x0010000000000000)) { /* subnormal: scale into the normal range */
    x = x * 18014398509481984.0; /* 2^54, exact */
    bits = nestcl_f64_bits(x);
    k = -54;
  }
  k += (nestcl_i32)(bits >> 52) - 1023;
  nestcl_u64 frac = bits & NESTCL_U64_C(0x000fffffffffffff);
  if (frac > NESTCL_U64_C(0x6a09e667f3bcd)) { /* m > sqrt(2): use m / 2 */
    bits = frac | NESTCL_U64_C(0x3fe0000000000000);
    k += 1;
  } else {
    bits = frac | NESTCL_U64_C(0x3ff0000000000000);
  }
  double m = nestcl_bits_f64(bits);
  double f = m - 1.0; /* exact: m is within a factor 2 of 1 */
  double s = f / (2.0 + f);
  double z = s * s;
  double r = 2.0 / 23.0;
  r = 2.0 / 21.0 + z * r;
  r = 2.0 / 19.0 + z * r;
  r = 2.0 / 17.0 + z * r;
  r = 2.0 / 15.0 + z * r;
  r = 2.0 / 13.0 + z * r;
  r = 2.0 / 11.0 + z * r;
  r = 2.0 / 9.0 + z * r;
  r = 2.0 / 7.0 + z * r;
  r = 2.0 / 5.0 + z * r;
  r = 2.0 / 3.0 + z * r;
  r = z * r;
  double hfsq = 0.5 * f * f;
  double dk = (double)k;
  const double ln2_hi = 0x1.62e42p-1; /* 21 bits: dk * ln2_hi is exact */
  const double ln2_lo = 0x1.fdf473de6af28p-22; /* ln 2 - ln2_hi */
  return dk * ln2_hi - ((hfsq - (s * (hfsq + r) + dk * ln2_lo)) - f);
}

/*
 * log1p(zh + zl) for |zh| < 2^-7.5, |zl| <= 2 ulp(zh), as hi + lo with |lo| below
 * 2^-8 |hi|: z - z^2/2 + Q, with z^2 in zh exact plus 2 zh zl, and the series
 * Q = z^3/3 - z^4/4 + ... + z^11/11 (next term below 2^-93) in zh alone.
 */
NESTCL_INLINE nestcl_dd nestcl_math_log1p_small(double zh, double zl)
{
  nestcl_dd sq = nestcl_dd_two_prod(zh, zh);
  nestcl_dd a = nestcl_dd_fast_two_sum(zh, -0.5 * sq.hi);
  double q = 1.0 / 11.0;
  q = -1.0 / 10.0 + zh * q;
  q = 1.0 / 9.0 + zh * q;
  q = -1.0 / 8.0 + zh * q;
  q = 1.0 / 7.0 + zh * q;
  q = -1.0 / 6.0 + zh * q;
  q = 1.0 / 5.0 + zh * q;
  q = -1.0 / 4.0 + zh * q;
  q = 1.0 / 3.0 + zh * q;
  nestcl_dd r;
  r.hi = a.hi;
  r.lo = ((a.lo + zl) - (0.5 * sq.lo + zh * zl)) + (sq.hi * zh) * q;
  return r;
}

/*
 * log(x) as hi + lo for finite x > 0 (subnormal included), relative error
 * below 2^-68 and absolute error below 2^-76; the basis of log1p and pow.
 */
NESTCL_INLINE nestcl_dd nestcl_math_log_dd(double x)
{
  nestcl_i32 k = 0;
  nestcl_u64 bits = nestcl_f64_bits(x);
  if (bits < NESTCL_U64_C(0x0010000000000000)) { /* subnormal: scale into the normal range */
    x = x * 18014398509481984.0; /* 2^54, exact */
    bits = nestcl_f64_bits(x);
    k = -54;
  }
  k += (nestcl_i32)(bits >> 52) - 1023;
  nestcl_u64 frac = bits & NESTCL_U64_C(0x000fffffffffffff);
  if (frac > NESTCL_U64_C(0x6a09e667f3bcd)) { /* m > sqrt(2): use m / 2 */
    bits = frac | NESTCL_U64_C(0x3fe0000000000000);
    k += 1;
  } else {
    bits = frac | NESTCL_U64_C(0x3ff0000000000000);
  }
  double m = nestcl_bits_f64(bits);
  nestcl_i32 i = (nestcl_i32)(m * 128.0 + 0.5); /* 91..181 */
  double c = (double)i * (1.0 / 128.0);
  double f = m - c; /* exact (Sterbenz), |f| <= 2^-8 */
  /*
   * z = f / c as zh + zl. zh = f (1/c) is within 2 ulp of f / c, close enough
   * that the remainder f - zh c is a double and comes out exact from Dekker's
   * product; the small rounding of zl = remainder (1/c) is far below 2^-100.
   */
  double ic = nestcl_math_inv_table[i - 91];
  double zh = f * ic;
  nestcl_dd zc = nestcl_dd_two_prod(zh, c);
  double zl = ((f - zc.hi) - zc.lo) * ic;
  nestcl_dd lz = nestcl_math_log1p_small(zh, zl);
  /* k ln2 + log c + log1p(z), the large parts in two-sums. */
  double kd = (double)k;
  double lch = nestcl_math_log_table[2 * (i - 91)];
  double lcl = nestcl_math_log_table[2 * (i - 91) + 1];
  nestcl_dd s1 = nestcl_dd_two_sum(kd * NESTCL_MATH_LN2HI, lch);
  nestcl_dd s2 = nestcl_dd_two_sum(s1.hi, lz.hi);
  double lo = (s1.lo + s2.lo) + (lz.lo + (lcl + kd * NESTCL_MATH_LN2LO));
  return nestcl_dd_fast_two_sum(s2.hi, lo);
}

/* log(1 + x), accurate near 0 as well. */
NESTCL_INLINE double nestcl_log1p(double x)
{
  if (!(x == x)) {
    return x;
  }
  if (x < 0x1p-54 && x > -0x1p-54) {
    return x; /* x^2/2 is below half an ulp of x; keeps -0 */
  }
  if (x <= -1.0) {
    return x == -1.0 ? -NESTCL_MATH_INF : NESTCL_MATH_QNAN;
  }
  if (x == NESTCL_MATH_INF) {
    return x;
  }
  if (x < 0x1p-8 && x > -0x1p-8) {
    /* Directly: below, the rounding of d/u (up to 2^-107) would cost a tenth of an ulp. */
    nestcl_dd r = nestcl_math_log1p_small(x, 0.0);
    return r.hi + r.lo;
  }
  /* 1 + x = u + d exactly; log(u + d) = log(u) + d/u, (d/u)^2 being below 2^-106. */
  nestcl_dd u = nestcl_dd_two_sum(1.0, x);
  nestcl_dd l = nestcl_math_log_dd(u.hi);
  nestcl_dd s = nestcl_dd_two_sum(l.hi, u.lo / u.hi);
  return s.hi + (s.lo + l.lo);
}

/* 0 if y is not an integer, 1 if it is an odd one, 2 if an even one (y finite). */
NESTCL_INLINE int nestcl_math_int_kind(double y)
{
  nestcl_u64 b = nestcl_f64_bits(y);
  nestcl_i32 e = (nestcl_i32)((b >> 52) & 0x7ff) - 1023;
  if (e < 0) {
    return y == 0.0 ? 2 : 0;
  }
  if (e > 52) {
    return 2;
  }
  nestcl_u64 frac = b & NESTCL_U64_C(0x000fffffffffffff);
  if (frac & ((NESTCL_U64_C(1) << (52 - e)) - 1)) {
    return 0;
  }
  if (e == 0) {
    return 1; /* +-1 */
  }
  return (frac >> (52 - e)) & 1 ? 1 : 2;
}

/* x^y, with the special cases of C99 Annex F. */
NESTCL_INLINE double nestcl_pow(double x, double y)
{
  if (y == 0.0 || x == 1.0) {
    return 1.0; /* even for a NaN in the other argument */
  }
  if (!(x == x)) {
    return x;
  }
  if (!(y == y)) {
    return y;
  }
  int xneg = (nestcl_f64_bits(x) >> 63) != 0;
  double ax = xneg ? -x : x;
  if (y == NESTCL_MATH_INF || y == -NESTCL_MATH_INF) {
    if (ax == 1.0) {
      return 1.0; /* (-1)^+-inf */
    }
    return (ax < 1.0) == (y < 0.0) ? NESTCL_MATH_INF : 0.0;
  }
  int kind = nestcl_math_int_kind(y);
  double sign = (xneg && kind == 1) ? -1.0 : 1.0;
  if (ax == 0.0) {
    return y < 0.0 ? sign * NESTCL_MATH_INF : sign * 0.0;
  }
  if (ax == NESTCL_MATH_INF) {
    return y < 0.0 ? sign * 0.0 : sign * NESTCL_MATH_INF;
  }
  if (xneg && kind == 0) {
    return NESTCL_MATH_QNAN;
  }
  if (ax == 1.0) {
    return sign; /* (-1)^integer; also keeps y (up to DBL_MAX) out of the split below */
  }
  nestcl_dd l = nestcl_math_log_dd(ax);
  double ph = y * l.hi;
  /* Beyond these even the rounded product decides: |log x| >= 2^-53 keeps y below 2^995 for the split. */
  if (ph > NESTCL_MATH_EXP_OVERFLOW) {
    return sign * NESTCL_MATH_INF;
  }
  if (ph < NESTCL_MATH_EXP_UNDERFLOW) {
    return sign * 0.0;
  }
  nestcl_dd p = nestcl_dd_two_prod(y, l.hi);
  return sign * nestcl_math_exp_core(p.hi, p.lo + y * l.lo);
}

#endif /* NESTCL_MATH_H */
