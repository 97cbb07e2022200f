/*
 * A translated model's failures (model.h, Failures: the exceptions its
 * update() throws) by name, and as the error that stops a run.
 */
#ifndef NESTCL_MODEL_FAILURE_H
#define NESTCL_MODEL_FAILURE_H

#include <stdint.h>

#include "nestcl/device.h"
#include "nestcl/model.h"

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
