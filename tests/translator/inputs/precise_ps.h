// The precise-timing idioms of NEST's *_ps models (hand-written, not NEST's code): spikes queued with their
// offsets in a SliceRingBuffer and taken one by one in the step, the refractory pseudo-event, methods of the
// model called from update() (with update()'s origin, the lag and their own arguments), regula_falsi() on the
// model's threshold_distance(), IAFPropagatorExp / IAFPropagatorAlpha built in pre_run_hook(), and
// set_spiketime() with the offset the spike's event carries.
#ifndef PRECISE_PS_H
#define PRECISE_PS_H
#include <cmath>
#include <tuple>

#include "archiving_node.h"
#include "event.h"
#include "iaf_propagator.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "numerics.h"
#include "regula_falsi.h"
#include "ring_buffer.h"
#include "slice_ring_buffer.h"

namespace nest
{
class precise_ps : public ArchivingNode
{
public:
  void handle( SpikeEvent& e ) override
  {
    const long Tdeliver = e.get_stamp().get_steps() + e.get_delay_steps() - 1;
    B_.events_.add_spike( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), Tdeliver,
      e.get_offset(), e.get_weight() * e.get_multiplicity() );
  }
  void handle( CurrentEvent& e ) override
  {
    B_.currents_.add_value(
      e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_current() );
  }
  void update( Time const& origin, const long from, const long to ) override
  {
    if ( from == 0 )
    {
      B_.events_.prepare_delivery();
    }
    for ( long lag = from; lag < to; ++lag )
    {
      const long T = origin.get_steps() + lag;
      if ( S_.refractory_ and T + 1 - S_.last_step_ == V_.refractory_steps_ )
      {
        B_.events_.add_refractory( T, S_.last_offset_ );
      }
      V_.v_before_ = S_.v_;
      V_.i_before_ = S_.i_;
      double last = V_.h_;
      double ev_offset;
      double ev_weight;
      bool end_of_refract;
      while ( B_.events_.get_next_spike( T, true, ev_offset, ev_weight, end_of_refract ) )
      {
        if ( last > ev_offset )
        {
          propagate_( last - ev_offset );
          if ( S_.v_ >= P_.theta_ )
          {
            emit_spike_( origin, lag, V_.h_ - last, last - ev_offset );
          }
        }
        if ( end_of_refract )
        {
          S_.refractory_ = false;
        }
        else
        {
          S_.i_ += ev_weight;
        }
        V_.v_before_ = S_.v_;
        V_.i_before_ = S_.i_;
        last = ev_offset;
      }
      if ( last > 0 )
      {
        propagate_( last );
        if ( S_.v_ >= P_.theta_ )
        {
          emit_spike_( origin, lag, V_.h_ - last, last );
        }
      }
      S_.i_ext_ = B_.currents_.get_value( lag );
    }
  }
  void pre_run_hook() override
  {
    V_.h_ = Time::get_resolution().get_ms();
    V_.refractory_steps_ = Time( Time::ms( P_.t_ref_ ) ).get_steps();
    propagator_ = IAFPropagatorExp( P_.tau_syn_, P_.tau_m_, P_.c_m_ );
    alpha_ = IAFPropagatorAlpha( P_.tau_syn_, P_.tau_m_, P_.c_m_ );
  }
  double
  threshold_distance( double t ) const
  {
    double p31;
    double p32;
    std::tie( p31, p32 ) = alpha_.evaluate( t );
    return V_.v_before_ * std::exp( -t / P_.tau_m_ ) + propagator_.evaluate( t ) * V_.i_before_ + 0.0 * p31 * p32
      - P_.theta_;
  }

private:
  void
  propagate_( const double dt )
  {
    if ( not S_.refractory_ )
    {
      S_.v_ = S_.v_ * std::exp( -dt / P_.tau_m_ ) + propagator_.evaluate( dt ) * S_.i_
        - P_.tau_m_ / P_.c_m_ * numerics::expm1( -dt / P_.tau_m_ ) * S_.i_ext_;
    }
    S_.i_ = S_.i_ * std::exp( -dt / P_.tau_syn_ );
  }
  void
  emit_spike_( Time const& origin, const long lag, const double t0, const double dt )
  {
    S_.last_step_ = origin.get_steps() + lag + 1;
    S_.last_offset_ = V_.h_ - ( t0 + regula_falsi( *this, dt ) );
    S_.v_ = 0.0;
    S_.refractory_ = true;
    set_spiketime( Time::step( S_.last_step_ ), S_.last_offset_ );
    SpikeEvent se;
    se.set_offset( S_.last_offset_ );
    kernel().event_delivery_manager.send( *this, se, lag );
  }

  struct Parameters_
  {
    double tau_m_ = 10.0;
    double tau_syn_ = 2.0;
    double c_m_ = 250.0;
    double t_ref_ = 2.0;
    double theta_ = 15.0;
  };
  struct State_
  {
    double v_ = 0.0;
    double i_ = 0.0;
    double i_ext_ = 0.0;
    bool refractory_ = false;
    long last_step_ = -1;
    double last_offset_ = 0.0;
  };
  struct Variables_
  {
    double h_;
    long refractory_steps_;
    double v_before_;
    double i_before_;
  };
  struct Buffers_
  {
    SliceRingBuffer events_;
    RingBuffer currents_;
  };
  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;
  IAFPropagatorExp propagator_;
  IAFPropagatorAlpha alpha_;
};
}
#endif
