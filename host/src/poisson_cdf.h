/*
 * The inversion table of a Poisson distribution that device
 * poisson_generators draw from (the engine's drives and nestcl_block's).
 */
#ifndef NESTCL_POISSON_CDF_H
#define NESTCL_POISSON_CDF_H

#include <stdint.h>

#include "nestcl/device.h"

/*
 * The inversion table of Poisson(mu) for nestcl_poisson_table (nestcl_core.h):
 * the cumulative sums of nestcl_poisson_invert (nestcl_philox.h) computed with
 * its exact operations, up to the term that no longer changes them; *kstop is
 * the count that loop returns there. *cdf is malloc'ed (freed first).
 */
int nestcl_poisson_cdf(double mu, double exp_neg_mu, double **cdf, uint32_t *len, uint32_t *kstop);

#endif
