/*
 * Parameters equal over all the neurons a kernel updates are compiled into it
 * as constants (docs/architecture.md, "Neuron state and parameters"): the translator reads every Parameters_ member
 * through a macro that -DNESTCL_CONST_<member>=value replaces. Shared by the
 * engine (per population, over its GPU blocks) and nestcl_block.
 */
#ifndef NESTCL_SPECIALISE_H
#define NESTCL_SPECIALISE_H

#include <stddef.h>
#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/model.h"

/*
 * Writes the options for model m whose neurons are in n_sets SoA sets
 * (fields[s], n[s] neurons each) into buf (cap bytes, always terminated). A
 * parameter that differs, is not finite, or does not fit stays an array.
 */
void nestcl_const_options(const nestcl_model *m, void *const *const *fields, const uint32_t *n, int n_sets, char *buf,
                          size_t cap);

/*
 * What this header also declared before it was split by role: the engine's
 * files that include it for these get them here until they include the
 * headers themselves.
 */
#include "model_failure.h"
#include "poisson_cdf.h"
#include "update_fill.h"

#endif
