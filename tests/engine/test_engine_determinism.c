/*
 * The determinism invariant (docs/architecture.md, "Determinism and random numbers"): the Brunel network of brunel.c,
 * 2,000 neurons, in-degree 200, 200 ms, Poisson drive, gives bit-identical
 * spike trains with 1 and 2 CPU threads, 1 and 2 PoCL streams, and 1 thread +
 * 1 stream at alpha 0.3 and 0.7; also when simulate() is called in pieces that
 * split super steps (70 + 130 ms), and with double instead of float weights.
 * It runs for the translated iaf_psc_alpha (the product path: the generated C
 * loop on the threads, the generated kernel on the streams) and for the
 * hand-written test_lif (the engine alone, without the translator). The
 * delivery kernel's two shapes are both run on whatever device there is: the
 * device's default one, and the other forced through NESTCL_DELIVER_MODE with
 * a width that leaves partial chunks (so the GPU shape is tested on PoCL too).
 * Needs an OpenCL device with fp64 and 64-bit atomics (PoCL here); without one
 * it skips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brunel.h"

/* 0 pass, 1 fail, 77 no device. */
static int check_net(const brunel_net *net)
{
  nestcl_engine_config cfg;
  nestcl_engine_config_defaults(&cfg);
  cfg.seed = 4242;
  const double whole[] = {200.0}, split[] = {70.0, 130.0};
  /* Stop requests: at the first super step's end, and within a super step (70 ms is not a multiple of 1.5 ms). */
  const double stopped[] = {-200.0}, split_stopped[] = {70.0, -130.0};
  brunel_result ref;
  if (brunel_run(net, &cfg, 2000, 200, whole, 1, &ref)) {
    fprintf(stderr, "FAIL %s reference run: %s\n", net->label, nestcl_last_error());
    return 1;
  }
  double rate = (double)ref.n / 2000.0 / 0.2;
  printf("%s, 1 thread: %zu spikes, %.2f Hz, %llu synapses\n", net->label, ref.n, rate,
         (unsigned long long)ref.st.synapses);
  if (rate < net->rate_min || rate > net->rate_max || ref.st.synapses != 2000ull * 200ull) {
    fprintf(stderr, "FAIL %s: network not in its regime (rate %.2f Hz, want [%g, %g]) or wrong synapse count\n",
            net->label, rate, net->rate_min, net->rate_max);
    brunel_free(&ref);
    return 1;
  }
  /* Both nets' weights are exact in float, so double weights give the same trains. */
  const brunel_variant runs[] = {
    {"1 thread, 70+130 ms", 1, 0, 0.0, split, 2, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"2 threads", 2, 0, 0.0, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 stream", 0, 1, 1.0, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"2 streams", 0, 2, 1.0, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.3", 1, 1, 0.3, whole, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.7, 70+130 ms", 1, 1, 0.7, split, 2, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"2 threads, stopped on request at 1.5 ms and continued", 2, 0, 0.0, stopped, 1, 0, 0, NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.5, stopped on request at 70.5 ms and continued", 1, 1, 0.5, split_stopped, 2, 0, 0,
     NULL, NULL, 0, 0, 0, 0},
    {"1 thread + 1 stream, alpha 0.5, double weights", 1, 1, 0.5, whole, 1, 1, 0, NULL, NULL, 0, 0, 0, 0},
    {"2 streams, strided delivery of width 7", 0, 2, 1.0, whole, 1, 0, 0, "strided", "7", 0, 0, 0, 0},
    {"1 stream, contiguous delivery of width 3", 0, 1, 1.0, whole, 1, 0, 0, "contiguous", "3", 0, 0, 0, 0},
  };
  int fails = brunel_check_variants(net, &cfg, &ref, runs, (int)(sizeof runs / sizeof runs[0]));
  if (fails < 0) {
    brunel_free(&ref);
    return 77;
  }
  brunel_free(&ref);
  return fails ? 1 : 0;
}

int main(void)
{
  int status = 0;
#ifdef NESTCL_TEST_HAVE_BUILTIN_MODELS
  brunel_net alpha = brunel_iaf_psc_alpha();
  int rc = check_net(&alpha);
  if (rc == 77) {
    return 77;
  }
  status |= rc;
#else
  printf("note: nestcl_models not built; only test_lif is checked\n");
#endif
  brunel_net lif = brunel_test_lif();
  int rc2 = check_net(&lif);
  if (rc2 == 77) {
    return 77;
  }
  status |= rc2;
  return status ? 1 : 0;
}
