/*
 * Parameters equal over all the neurons a kernel updates are compiled into it
 * as constants (DESIGN.md §2): the translator reads every Parameters_ member
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
void nestcl_const_options(const nestcl_model *m, void *const *const *fields, const uint32_t *n, int n_sets,
                          char *buf, size_t cap);

/*
 * Sets the arguments of a model's update kernel that stay the same from slice
 * to slice (model.h: all but origin_steps, from and to), for the engine's
 * blocks and nestcl_block alike; spike_offsets (the argument after the
 * fields) only where it is not NULL, for a model with spike_offsets set.
 * Returns the OR of the OpenCL results.
 */
cl_int nestcl_update_kernel_fixed_args(cl_kernel k, uint32_t n, uint32_t K, double resolution_ms, uint32_t ring_slots,
                                       uint32_t n_channels, cl_mem ring, cl_mem spike_count, cl_mem spikes,
                                       uint32_t spike_capacity, int64_t rec_interval, cl_mem rec,
                                       uint32_t rng_seed, uint64_t id_first, uint64_t id_stride,
                                       const nestcl_buffer *fields, int n_fields, cl_mem spike_offsets);

/*
 * The event arguments of the update kernel of a model with event_queue set
 * (model.h): evq_first, evq_lag, evq_offset, evq_weight, after the fields and
 * spike_offsets. Returns the OR of the OpenCL results.
 */
cl_int nestcl_update_kernel_evq_args(cl_kernel k, const nestcl_model *m, const cl_mem evq[4]);

/*
 * The inversion table of Poisson(mu) for nestcl_poisson_table (nestcl_core.h):
 * the cumulative sums of nestcl_poisson_invert (nestcl_philox.h) computed with
 * its exact operations, up to the term that no longer changes them; *kstop is
 * the count that loop returns there. *cdf is malloc'ed (freed first).
 */
int nestcl_poisson_cdf(double mu, double exp_neg_mu, double **cdf, uint32_t *len, uint32_t *kstop);

/*
 * A model's failure code (model.h, Failures) by name: failures[code - 1] of
 * the descriptor, or "failure" for a code it does not name.
 */
const char *nestcl_failure_name(const nestcl_model *m, uint32_t code);

/*
 * The failure that an update recorded in its count words (model.h: count[1..4]
 * = code, index, lag, status) as an NESTCL_ERUNTIME error, "<model> neuron <id>
 * at t = <t_ms> ms: <failure> (status <status>)", with id the neuron's id
 * (the engine's gid, the block's id) and t_ms the start of the failing step.
 */
int nestcl_failure_error(const nestcl_model *m, const uint32_t *count, uint64_t id, double t_ms);

#endif
