/*
 * What the export put on the device (nestcl_synapse_export.cpp, the static
 * synapses and generators; nestcl_plastic_export.cpp, the translated ones):
 * per thread, the rows of each synapse model and how many there are.
 */
#ifndef NESTCL_SYNAPSE_EXPORT_H
#define NESTCL_SYNAPSE_EXPORT_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct ExportState
{
  std::vector< long > n_syn, n_gen;  // per thread: device synapses, device generators
  std::vector< long > n_plastic;     // per thread: device STDP synapses
#ifdef HAVE_NESTCL
  std::vector< std::vector< SynRows > > syn_rows;     // per thread: synapse models delivered on the device
  std::vector< std::vector< PlasticRows > > plastic;  // per thread: translated (STDP) synapses on the device
#endif
};
}

#endif
