// Robustness case: the shape of NESTML-generated C++ (written for this test,
// not generated): spike inputs in a std::vector< RingBuffer > indexed by
// receptor, per-step sums in a Buffers_ vector behind a reference getter,
// an ode_state[] array indexed by a State_ enum, static const counts, an
// unused get_t lambda, nest:: qualified names, a local named like a kernel
// argument (n), and/or spelled as words.
#ifndef NESTML_STYLE_H
#define NESTML_STYLE_H
#include <algorithm>
#include <cmath>
#include <vector>

#include "archiving_node.h"
#include "event.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
class nestml_style : public nest::ArchivingNode
{
public:
  void handle( nest::SpikeEvent& e ) override
  {
    const long rport = e.get_rport();
    B_.spike_inputs_[ rport - MIN_SPIKE_RECEPTOR ].add_value(
      e.get_rel_delivery_steps( nest::kernel().simulation_manager.get_slice_origin() ),
      e.get_weight() * e.get_multiplicity() );
  }
  void handle( nest::CurrentEvent& e ) override
  {
    B_.I_stim.add_value( e.get_rel_delivery_steps( nest::kernel().simulation_manager.get_slice_origin() ),
      e.get_weight() * e.get_current() );
  }
  void update( nest::Time const& origin, const long from, const long to ) override;
  void pre_run_hook() override
  {
    const double __resolution = nest::Time::get_resolution().get_ms();
    V_.__P__V_m = std::exp( -__resolution / P_.tau_m );
    V_.__P__I_syn = std::exp( -__resolution / P_.tau_syn );
    V_.__refr_steps = nest::Time( nest::Time::ms( P_.t_ref ) ).get_steps();
  }

private:
  static const long MIN_SPIKE_RECEPTOR = 1;
  static const size_t NUM_SPIKE_RECEPTORS = 2;

  struct Parameters_
  {
    double tau_m = 10.0;
    double tau_syn = 2.0;
    double V_th = -55.0;
    double V_reset = -70.0;
    double E_L = -70.0;
    double t_ref = 2.0;
    double C_m = 250.0;
  };
  struct State_
  {
    enum StateVecElems
    {
      V_m,
      I_syn,
      STATE_VEC_SIZE
    };
    double ode_state[ STATE_VEC_SIZE ] = { -70.0, 0.0 };
    long r = 0;
  };
  struct Variables_
  {
    double __P__V_m;
    double __P__I_syn;
    long __refr_steps;
  };
  struct Buffers_
  {
    std::vector< nest::RingBuffer > spike_inputs_;
    std::vector< double > spike_inputs_grid_sum_;
    nest::RingBuffer I_stim;
    double I_stim_grid_sum_;
  };

  inline double
  get_V_m() const
  {
    return S_.ode_state[ State_::V_m ];
  }
  inline std::vector< double >&
  get_spike_inputs_()
  {
    return B_.spike_inputs_grid_sum_;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;
};

inline void
nestml_style::update( nest::Time const& origin, const long from, const long to )
{
  const double __timestep = nest::Time::get_resolution().get_ms();
  for ( long lag = from; lag < to; ++lag )
  {
    auto get_t = [ origin, lag ]() { return nest::Time( nest::Time::step( origin.get_steps() + lag + 1 ) ).get_ms(); };

    for ( long i = 0; i < NUM_SPIKE_RECEPTORS; ++i )
    {
      get_spike_inputs_()[ i ] = B_.spike_inputs_[ i ].get_value( lag );
    }
    B_.I_stim_grid_sum_ = B_.I_stim.get_value( lag );

    double n = 0.0; // named like a kernel argument on purpose
    for ( size_t k = 0; k < get_spike_inputs_().size(); ++k )
    {
      n += get_spike_inputs_()[ k ];
    }
    if ( S_.r > 0 )
    {
      --S_.r;
    }
    else
    {
      S_.ode_state[ State_::V_m ] = P_.E_L + ( get_V_m() - P_.E_L ) * V_.__P__V_m
        + S_.ode_state[ State_::I_syn ] * __timestep / P_.C_m;
    }
    S_.ode_state[ State_::I_syn ] = S_.ode_state[ State_::I_syn ] * V_.__P__I_syn + n + B_.I_stim_grid_sum_;
    S_.ode_state[ State_::V_m ] = std::max( S_.ode_state[ State_::V_m ], P_.V_reset - 20.0 );

    if ( S_.r == 0 and get_V_m() >= P_.V_th )
    {
      S_.r = V_.__refr_steps;
      S_.ode_state[ State_::V_m ] = P_.V_reset;
      set_spiketime( nest::Time::step( origin.get_steps() + lag + 1 ) );
      nest::SpikeEvent se;
      nest::kernel().event_delivery_manager.send( *this, se, lag );
    }
  }
}
}
#endif
