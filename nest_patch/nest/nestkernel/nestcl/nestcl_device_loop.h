/*
 * The device loop (nestcl_device_loop.cpp): which stream threads run their
 * Runs in it, or why none do, and which path the last Run took.
 */
#ifndef NESTCL_DEVICE_LOOP_H
#define NESTCL_DEVICE_LOOP_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct LoopState
{
  std::string sim_path, sim_path_why;  // the last Run's path, and why not the device loop
#ifdef HAVE_NESTCL
  std::vector< LoopIds > loop_ids;  // per thread: rows by loop id where the device loop may run
  // The stream threads whose Runs go to the device loop (empty: none), and why none (nestcl_simulate_path_reason).
  // With several, their blocks are one set (set_threads, set_blocks: block k is thread first's group second),
  // owned by the first; set_of( tid ) finds any thread's set.
  std::vector< size_t > loop_threads;
  std::vector< size_t > set_threads;                      // the threads of the shared set (owner first), or none
  std::vector< std::pair< size_t, size_t > > set_blocks;  // its blocks as (thread, group)
  std::string share_refused;  // why the device loop's threads got sets of their own again (their export)
  std::string loop_why;
  // A Run in the device loop is under way: its slices that begin or end inside min_delay go slice by slice, but
  // nothing reaches NEST's ring buffers of the device neurons (the loop's condition), so none are drained.
  bool in_device_loop = false;
#endif
};
}

#endif
