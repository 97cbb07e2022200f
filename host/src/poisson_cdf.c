/* The inversion table of a Poisson distribution (poisson_cdf.h). */
#include <stdlib.h>

#include "poisson_cdf.h"

int nestcl_poisson_cdf(double mu, double exp_neg_mu, double **cdf, uint32_t *len, uint32_t *kstop)
{
  size_t cap = 64;
  free(*cdf);
  *len = 0;
  *cdf = malloc(cap * sizeof **cdf);
  if (!*cdf) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  double p = exp_neg_mu, F = p;
  (*cdf)[0] = F;
  *len = 1;
  for (uint32_t k = 1;; ++k) {
    p = p * mu / (double)k;
    double next = F + p;
    if (next == F || k > 1000000u) {
      *kstop = k;
      return 0;
    }
    F = next;
    if (*len == cap) {
      cap *= 2;
      double *t = realloc(*cdf, cap * sizeof *t);
      if (!t) {
        return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
      }
      *cdf = t;
    }
    (*cdf)[(*len)++] = F;
  }
}
