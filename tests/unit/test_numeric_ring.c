/*
 * Unit test of kernels_templates/nestcl_ring.h on the C path: slot arithmetic
 * (NEST's get_modulo, including negative and large step counts), the
 * [slot][channel][n] layout that model.h fixes, read-and-clear semantics, and
 * spike-list overflow detection, and SliceRingBuffer's get_next_spike()
 * (nestcl_evq_next): time order within a step, the refractory pseudo-event
 * against spikes, accumulation of simultaneous spikes. The OpenCL side runs the same helpers in
 * test_numeric_opencl.c.
 */
#include "nestcl_check.h"
#include "nestcl_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_slot(void)
{
  CHECK(nestcl_ring_slot(0, 0, 30) == 0, "slot 0");
  CHECK(nestcl_ring_slot(15, 14, 30) == 29 && nestcl_ring_slot(15, 15, 30) == 0, "wrap");
  CHECK(nestcl_ring_slot(-1, 0, 30) == 29 && nestcl_ring_slot(-31, 0, 30) == 29, "negative origin");
  CHECK(nestcl_ring_slot(INT64_C(1) << 40, 3, 7) == (uint32_t)(((INT64_C(1) << 40) + 3) % 7), "large origin");
  for (int64_t origin = -100; origin < 100; ++origin) {
    uint32_t s = nestcl_ring_slot(origin, 5, 16);
    CHECK(s < 16 && (int64_t)s == ((origin + 5) % 16 + 16) % 16, "slot of %lld", (long long)origin);
  }
}

static void test_ring(void)
{
  enum { SLOTS = 4, CH = 3, N = 5 };
  int64_t ring[SLOTS * CH * N];
  memset(ring, 0, sizeof ring);
  nestcl_ring_add(ring, CH, N, 2, 1, 4, 1.5);
  nestcl_ring_add(ring, CH, N, 2, 1, 4, -0.25);
  nestcl_ring_add_fixed(ring, CH, N, 2, 2, 4, nestcl_fixed_from_double(7.0));
  nestcl_ring_add(ring, CH, N, 3, 0, 0, 2.0);
  /* model.h: element (slot, ch, i) is at (slot * n_channels + ch) * n + i */
  CHECK(ring[(2 * CH + 1) * N + 4] == nestcl_fixed_from_double(1.25), "layout [slot][channel][n]");
  CHECK(ring[(3 * CH + 0) * N + 0] == nestcl_fixed_from_double(2.0), "layout of the last slot");
  CHECK(nestcl_ring_peek(ring, CH, N, 2, 1, 4) == 1.25, "peek");
  CHECK(nestcl_ring_peek(ring, CH, N, 2, 1, 4) == 1.25, "peek must not clear");
  CHECK(nestcl_ring_take(ring, CH, N, 2, 1, 4) == 1.25, "take");
  CHECK(nestcl_ring_peek(ring, CH, N, 2, 1, 4) == 0.0, "take must clear");
  CHECK(nestcl_ring_peek(ring, CH, N, 2, 2, 4) == 7.0, "other channel untouched");
  nestcl_ring_add(ring, CH, N, 2, 0, 4, 3.0);
  nestcl_ring_add(ring, CH, N, 2, 0, 3, 9.0);
  nestcl_ring_zero_all(ring, CH, N, 2, 4);
  for (uint32_t ch = 0; ch < CH; ++ch) {
    CHECK(nestcl_ring_peek(ring, CH, N, 2, ch, 4) == 0.0, "zero_all channel %u", ch);
  }
  CHECK(nestcl_ring_peek(ring, CH, N, 2, 0, 3) == 9.0, "zero_all must leave other neurons");
  CHECK(nestcl_ring_peek(ring, CH, N, 3, 0, 0) == 2.0, "zero_all must leave other slots");
}

static void test_spikes(void)
{
  nestcl_spike_t spikes[3];
  uint32_t count = 0;
  memset(spikes, 0xff, sizeof spikes);
  nestcl_emit_spike(&count, spikes, 2, 10, 0);
  nestcl_emit_spike(&count, spikes, 2, 11, 14);
  nestcl_emit_spike(&count, spikes, 2, 12, 3); /* beyond the capacity: counted, not written */
  CHECK(count == 3, "count %u", count);
  CHECK(spikes[0].index == 10 && spikes[0].lag == 0 && spikes[1].index == 11 && spikes[1].lag == 14, "spike entries");
  CHECK(spikes[2].index == 0xffffffffu, "write past the capacity");
  CHECK(sizeof(nestcl_spike_t) == 8, "nestcl_spike must match uint2");
}

/* One neuron's staged events of an update at origin 100, in NEST's order (lag, then earliest = largest offset). */
static void test_event_queue(void)
{
  const uint32_t lag[] = {0, 0, 0, 0, 1, 1};
  const double off[] = {0.07, 0.05, 0.03, 0.03, 0.05, 0.02};
  const double w[] = {1.5, 2.25, 0.1, 0.2, -4.0, 8.0};
  uint32_t cur = 0;
  const uint32_t end = 6;
  int64_t rstamp = NESTCL_I64_MAX;
  double po = -1, pw = -1;
  int eor = -1;
  /* nothing for an earlier step; the pseudo-event of step 100 at offset 0.05 */
  CHECK(!nestcl_evq_next(lag, off, w, &cur, end, 100, 99, 0, &rstamp, 0.0, &po, &pw, &eor) && cur == 0 && eor == 0,
        "a step without events takes nothing");
  rstamp = 100;
  const double roff = 0.05;
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 100, 0, &rstamp, roff, &po, &pw, &eor) && po == 0.07 &&
          pw == 1.5 && !eor && cur == 1 && rstamp == 100,
        "the spike before the end of the refractory period comes first");
  /* same stamp and offset: the pseudo-event goes first (NEST: refract_ <= back) */
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 100, 1, &rstamp, roff, &po, &pw, &eor) && po == 0.05 &&
          pw == 0.0 && eor && cur == 1 && rstamp == NESTCL_I64_MAX,
        "the end of refractoriness, then the spike at the same offset");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 100, 1, &rstamp, roff, &po, &pw, &eor) && po == 0.05 &&
          pw == 2.25 && !eor && cur == 2,
        "the spike at the pseudo-event's offset");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 100, 1, &rstamp, roff, &po, &pw, &eor) && po == 0.03 &&
          pw == 0.1 + 0.2 && cur == 4,
        "simultaneous spikes accumulated in order");
  CHECK(!nestcl_evq_next(lag, off, w, &cur, end, 100, 100, 1, &rstamp, roff, &po, &pw, &eor) && cur == 4,
        "the step's events are all taken");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 1, &rstamp, roff, &po, &pw, &eor) && po == 0.05 &&
          pw == -4.0 && cur == 5,
        "accumulation stops at another offset");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 0, &rstamp, roff, &po, &pw, &eor) && po == 0.02 &&
          pw == 8.0 && cur == 6,
        "the last event");
  /* a pseudo-event later than every spike of its step comes after them, and alone */
  cur = 4;
  rstamp = 101;
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 0, &rstamp, 0.01, &po, &pw, &eor) && !eor && po == 0.05,
        "a spike before a late pseudo-event");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 0, &rstamp, 0.01, &po, &pw, &eor) && !eor && po == 0.02,
        "the next spike before a late pseudo-event");
  CHECK(nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 0, &rstamp, 0.01, &po, &pw, &eor) && eor && po == 0.01 &&
          rstamp == NESTCL_I64_MAX,
        "the late pseudo-event last");
  CHECK(!nestcl_evq_next(lag, off, w, &cur, end, 100, 101, 0, &rstamp, 0.01, &po, &pw, &eor),
        "nothing after the pseudo-event");
}

int main(void)
{
  test_slot();
  test_ring();
  test_spikes();
  test_event_queue();
  if (check_report())
    return 1;
  printf("ok\n");
  return 0;
}
