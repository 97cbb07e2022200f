/*
 * The network resident between Simulate calls (nestcl_resident.cpp): per
 * thread what is on the device and what changed, the settings it was built
 * for, and what travelled since ResetKernel.
 */
#ifndef NESTCL_RESIDENT_H
#define NESTCL_RESIDENT_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct ResidentState
{
#ifdef HAVE_NESTCL
  std::vector< Resident > res;         // per thread: what is on the device between calls, what changed
  std::string built_for;               // the settings the resident threads were built for (settings_of)
  std::vector< std::string > rebuilt;  // the last Prepare: each resident thread built again, and why
  // What went to the device and came back since ResetKernel (nestcl_resident): threads built, blocks of
  // neurons and synapse models (a thread's connections of one plastic model) sent in place or read back.
  struct Traffic
  {
    long built = 0, blocks_sent = 0, blocks_read = 0, synapses_sent = 0, synapses_read = 0;
  } traffic;
  bool network_changed = false;  // new nodes or connections since the last Prepare (NEST re-sorts)
#endif
};
}

#endif
