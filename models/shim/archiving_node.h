/*
 * nestcl's NEST-API shim: ArchivingNode, the base of neurons that keep their
 * spike history for STDP synapses, with NEST's semantics: set_spiketime()
 * prunes the entries every incoming STDP synapse has read and no later read
 * can reach, updates the Kminus traces and appends; get_history() hands out
 * the entries of (t1, t2] (shifted by stdp_eps) and counts one read of each;
 * get_K_value() is the trace just before t; register_stdp_connection() counts
 * a new synapse. The native reference for nestcl_history.h (the device's ring)
 * and for translated STDP synapses.
 */
#ifndef ARCHIVING_NODE_H
#define ARCHIVING_NODE_H

#include <algorithm>
#include <cmath>
#include <deque>

#include "dictionary.h"
#include "exceptions.h"
#include "histentry.h"
#include "kernel_manager.h"
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
public:
  ArchivingNode()
    : n_incoming_( 0 )
    , Kminus_( 0.0 )
    , Kminus_triplet_( 0.0 )
    , tau_minus_( 20.0 )
    , tau_minus_inv_( 1.0 / tau_minus_ )
    , tau_minus_triplet_( 110.0 )
    , tau_minus_triplet_inv_( 1.0 / tau_minus_triplet_ )
    , max_delay_( 0.0 )
    , trace_( 0.0 )
    , last_spike_( -1.0 )
  {
  }

  /* The last spike time in ms (offset included), -1 before the first. */
  double
  get_spiketime_ms() const
  {
    return last_spike_;
  }

  long
  get_spiketime_steps() const
  {
    return has_spiked_ ? last_spike_step_.get_steps() : -1;
  }

  double
  get_tau_minus_inv() const
  {
    return tau_minus_inv_;
  }

  /* The Kminus trace just before t: the last entry earlier than t - eps, decayed to t. */
  double
  get_K_value( double t ) override
  {
    trace_ = 0.0;
    for ( auto it = history_.rbegin(); it != history_.rend(); ++it )
    {
      if ( t - it->t_ > kernel().connection_manager.get_stdp_eps() )
      {
        trace_ = it->Kminus_ * std::exp( ( it->t_ - t ) * tau_minus_inv_ );
        break;
      }
    }
    return trace_;
  }

  /* [*start, *finish): the entries with t1 + eps <= t < t2 + eps; each counts one more read. */
  void
  get_history( double t1,
    double t2,
    std::deque< histentry >::iterator* start,
    std::deque< histentry >::iterator* finish ) override
  {
    const double eps = kernel().connection_manager.get_stdp_eps();
    auto end = history_.end();
    while ( end != history_.begin() and std::prev( end )->t_ >= t2 + eps )
    {
      --end;
    }
    *finish = end;
    auto begin = end;
    while ( begin != history_.begin() and std::prev( begin )->t_ >= t1 + eps )
    {
      --begin;
      begin->access_counter_++;
    }
    *start = begin;
  }

  /* A new STDP synapse: entries it will never read count as read by it. */
  void
  register_stdp_connection( double t_first_read, double delay ) override
  {
    const double eps = kernel().connection_manager.get_stdp_eps();
    for ( auto it = history_.begin(); it != history_.end() and t_first_read - it->t_ > -1.0 * eps; ++it )
    {
      it->access_counter_++;
    }
    ++n_incoming_;
    max_delay_ = std::max( delay, max_delay_ );
  }

  void
  get_status( Dictionary& d ) const override
  {
    d[ names::t_spike ] = get_spiketime_ms();
    d[ names::tau_minus ] = tau_minus_;
    d[ names::tau_minus_triplet ] = tau_minus_triplet_;
    d[ names::post_trace ] = trace_;
  }

  void
  set_status( const Dictionary& d ) override
  {
    double tm = tau_minus_, tmt = tau_minus_triplet_;
    d.update_value( names::tau_minus, tm );
    d.update_value( names::tau_minus_triplet, tmt );
    if ( tm <= 0.0 or tmt <= 0.0 )
    {
      throw BadProperty( "All time constants must be strictly positive." );
    }
    tau_minus_ = tm;
    tau_minus_triplet_ = tmt;
    tau_minus_inv_ = 1.0 / tau_minus_;
    tau_minus_triplet_inv_ = 1.0 / tau_minus_triplet_;
    bool clear = false;
    d.update_value( names::clear, clear );
    if ( clear )
    {
      clear_history();
    }
  }

  void
  clear_history()
  {
    last_spike_ = -1.0;
    has_spiked_ = false;
    Kminus_ = 0.0;
    Kminus_triplet_ = 0.0;
    history_.clear();
  }

protected:
  /* Protected, as in NEST: only the model's own update() records its spikes. */
  void
  set_spiketime( Time const& t_sp, double offset = 0.0 )
  {
    last_spike_step_ = t_sp;
    has_spiked_ = true;
    const double t_sp_ms = t_sp.get_ms() - offset;
    if ( n_incoming_ == 0 )
    {
      last_spike_ = t_sp_ms;
      return;
    }
    // Drop the oldest entry while every synapse has read it and the next one
    // lies beyond any later read (max_delay + min_delay + eps before t_sp).
    const double horizon = max_delay_ + Time::delay_steps_to_ms( kernel().connection_manager.get_min_delay() )
      + kernel().connection_manager.get_stdp_eps();
    while ( history_.size() > 1 and history_.front().access_counter_ >= n_incoming_
      and t_sp_ms - history_[ 1 ].t_ > horizon )
    {
      history_.pop_front();
    }
    Kminus_ = Kminus_ * std::exp( ( last_spike_ - t_sp_ms ) * tau_minus_inv_ ) + 1.0;
    Kminus_triplet_ = Kminus_triplet_ * std::exp( ( last_spike_ - t_sp_ms ) * tau_minus_triplet_inv_ ) + 1.0;
    last_spike_ = t_sp_ms;
    history_.push_back( histentry( last_spike_, Kminus_, Kminus_triplet_, 0 ) );
  }

  size_t n_incoming_;
  double Kminus_, Kminus_triplet_;
  double tau_minus_, tau_minus_inv_, tau_minus_triplet_, tau_minus_triplet_inv_;
  double max_delay_;
  double trace_;
  double last_spike_;
  std::deque< histentry > history_;

private:
  Time last_spike_step_;
  bool has_spiked_ = false;
};
}  // namespace nest

#endif
