/*
 * The target neuron of the native STDP tests (test_history_native.cpp,
 * test_synapse_native.cpp): a shim ArchivingNode that spikes on demand
 * (set_spiketime is protected, as in NEST) and records the value its last
 * SpikeEvent delivered (weight times multiplicity, as NEST's handlers add).
 */
#ifndef NESTCL_TEST_PROBE_NODE_HPP
#define NESTCL_TEST_PROBE_NODE_HPP

#include <cstring>

#include "archiving_node.h"

namespace nestcl_test
{
class probe : public nest::ArchivingNode
{
public:
  void
  spike( const nest::Time& t )
  {
    set_spiketime( t );
  }
  void
  pre_run_hook() override
  {
  }
  void
  update( nest::Time const&, const long, const long ) override
  {
  }
  void
  handle( nest::SpikeEvent& e ) override
  {
    received = e.get_weight() * static_cast< double >( e.get_multiplicity() );
  }
  size_t
  handles_test_event( nest::SpikeEvent&, size_t ) override
  {
    return 0;
  }
  double received = 0.0;
};

/* Bit-for-bit equality of two doubles. */
inline bool
same( double a, double b )
{
  return std::memcmp( &a, &b, sizeof a ) == 0;
}
}

#endif
