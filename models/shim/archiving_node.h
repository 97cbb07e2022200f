/*
 * nestcl's NEST-API shim: ArchivingNode, the base of neurons that keep their
 * spike history for STDP. The shim keeps only the last spike time, which is
 * what neuron models set (set_spiketime) and expose (t_spike); the STDP
 * history comes with the synapse work.
 */
#ifndef ARCHIVING_NODE_H
#define ARCHIVING_NODE_H

#include "dictionary.h"
#include "nest_names.h"
#include "nest_time.h"
#include "node.h"

namespace nest
{
class StructuralPlasticityNode : public Node
{
};

class ArchivingNode : public StructuralPlasticityNode
{
protected:
  /* Protected, as in NEST: only the model's own update() records its spikes. */
  void
  set_spiketime( Time const& t_sp, double offset = 0.0 )
  {
    last_spike_ = t_sp;
    last_spike_offset_ = offset;
    has_spiked_ = true;
  }

public:
  double
  get_spiketime_ms() const
  {
    return has_spiked_ ? last_spike_.get_ms() - last_spike_offset_ : -1.0;
  }

  long
  get_spiketime_steps() const
  {
    return has_spiked_ ? last_spike_.get_steps() : -1;
  }

  void
  clear_history()
  {
    has_spiked_ = false;
    last_spike_ = Time();
    last_spike_offset_ = 0.0;
  }

  void
  get_status( Dictionary& d ) const override
  {
    d[ names::t_spike ] = get_spiketime_ms();
  }

  void
  set_status( const Dictionary& ) override
  {
  }

private:
  Time last_spike_;
  double last_spike_offset_ = 0.0;
  bool has_spiked_ = false;
};
}  // namespace nest

#endif
