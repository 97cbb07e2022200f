/*
 * The tests' lookup of nestcl's built-in neuron and synapse models by name
 * (models/): NULL when there is none.
 */
#ifndef NESTCL_TESTS_BUILTIN_MODELS_H
#define NESTCL_TESTS_BUILTIN_MODELS_H

#include <string.h>

#include "nestcl/model.h"

static inline const nestcl_model *find_model(const char *name)
{
  for (int k = 0; k < nestcl_builtin_model_count; ++k) {
    if (strcmp(nestcl_builtin_models[k]->name, name) == 0)
      return nestcl_builtin_models[k];
  }
  return NULL;
}

static inline const nestcl_synapse_model *find_syn(const char *name)
{
  for (int k = 0; k < nestcl_builtin_synapse_count; ++k) {
    if (strcmp(nestcl_builtin_synapses[k]->name, name) == 0)
      return nestcl_builtin_synapses[k];
  }
  return NULL;
}

#endif
