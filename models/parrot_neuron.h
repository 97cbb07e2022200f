/*
 * parrot_neuron: repeats every spike it receives on port 0, one step later
 * than it arrives, with its multiplicity; spikes on port 1 are taken and
 * dropped (NEST uses that port to set exact spike times for STDP protocols).
 * The weights of connections onto it are ignored; its own outgoing
 * connections carry their weights. nestcl's own NEST-style source (NEST 3.10
 * names and layout, written for this project from the model's documented
 * behaviour); translator input and native reference.
 *
 * The microcircuit's thalamic input uses it as NEST's example does: one
 * Poisson generator drives a population of parrots, so that every target of
 * a thalamic neuron sees the same train.
 */
#ifndef PARROT_NEURON_H
#define PARROT_NEURON_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "flush_event_mechanism.h"
#include "nest_types.h"
#include "ring_buffer.h"

namespace nest
{
void register_parrot_neuron( const std::string& name );

class parrot_neuron : public ArchivingNode, public FlushEventMechanism
{
public:
  parrot_neuron();

  using Node::handle;
  using Node::handles_test_event;

  void handle( SpikeEvent& ) override;
  size_t handles_test_event( SpikeEvent&, size_t ) override;

  void get_status( Dictionary& ) const override;
  void set_status( const Dictionary& ) override;

  std::string
  get_name() const override
  {
    return "parrot_neuron";
  }

private:
  void init_buffers_() override;
  void
  pre_run_hook() override
  {
    FlushEventMechanism::pre_run_hook();
  }
  void update( Time const&, const long, const long ) override;

  /* The number of spikes arriving in each step (a RingBuffer of doubles, counts cast back). */
  struct Buffers_
  {
    RingBuffer n_spikes_;
  };

  Buffers_ B_;
};

inline size_t
parrot_neuron::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type == 0 or receptor_type == 1 )
  {
    return receptor_type;
  }
  throw UnknownReceptorType( receptor_type, get_name() );
}
}  // namespace nest

#endif
