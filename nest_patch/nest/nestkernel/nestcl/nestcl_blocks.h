/*
 * A stream thread's neurons in device blocks (nestcl_blocks.cpp): the device,
 * each thread's groups and the plan that runs them in NEST's order, the
 * input still in flight between Simulate calls, and what the slices cost.
 */
#ifndef NESTCL_BLOCKS_H
#define NESTCL_BLOCKS_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct BlockState
{
  std::vector< double > t_update, t_stage, t_emit, t_deliver;  // per thread, seconds
  std::vector< long > n_slices;                                // per thread: slices its stream updated
  std::vector< long > n_launches, n_waits;                     // per thread: those of its blocks destroyed so far
  std::vector< std::vector< int > > enq_rc;                    // per thread: each group's enqueue status this slice
  // Per model, the neurons of the last Simulate's stream VPs: how many ran on the device, how many on the
  // host (NEST's own update() there), and why those did (nestcl_nodes).
  struct Placed
  {
    long device = 0, host = 0, c_loop = 0;  // c_loop: translated, run by its C loop on the stream VP's thread
    std::map< std::string, long > why;
  };
  std::vector< std::map< std::string, Placed > > placed;  // per thread
#ifdef HAVE_NESTCL
  nestcl_device* dev = nullptr;
  std::string dev_opened_spec;
  int dev_queues = 0;
  std::vector< std::vector< Group > > groups;  // per thread
  // Per thread, in the order of its local neurons: a device group (at its first node) or a neuron that
  // stays on the host. update() runs them in this order, so every spike is sent in NEST's own order.
  struct Step
  {
    long group;  // index into groups, or -1 for `node`
    Node* node;
  };
  std::vector< std::vector< Step > > plan;
  std::vector< std::vector< double > > scratch;                         // per thread: drained channels, then a sample
  std::vector< std::vector< SortedSpike > > sorted;                     // per thread: a block's spikes in NEST's order
  std::vector< char > record;                                           // per thread: a multimeter listens on it
  std::vector< std::vector< std::pair< uint32_t, uint32_t > > > where;  // per thread, by thread lid: (group + 1, index)
  // The device rings' input still in flight when a Simulate ends (a partial
  // slice, delays above min_delay), per node id, for the next Simulate's blocks.
  struct Pending
  {
    uint32_t ch;
    int64_t step;
    int64_t value;
  };
  std::map< size_t, std::vector< Pending > > pending;
  std::vector< int64_t > next_step;       // per thread: the step its blocks update next
  std::vector< nestcl_block_set* > sets;  // per thread: its blocks as one set (nullptr: none)
  std::vector< char > c_loop;             // per thread: its blocks run their C loops on the thread
#endif
};
}

#endif
