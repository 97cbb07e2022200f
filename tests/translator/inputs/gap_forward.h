// The gap-junction models' idiom (hh_psc_alpha_gap, hh_cond_beta_gap_traub; hand-written, not NEST's
// code): update() forwards to update_( origin, from, to, false ), whose waveform-relaxation branches
// fold away; the gap-junction event is not sent, its coefficients are dead, the host-only buffers'
// resets to zero go, and the gap-junction input reads zero (the NEST glue refuses the node when the
// network has secondary connections, and under another wfr_interpolation_order than 3).
#ifndef GAP_FORWARD_H
#define GAP_FORWARD_H
#include <cmath>
#include <vector>

#include "archiving_node.h"
#include "event.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "ring_buffer.h"
#include "secondary_event.h"

namespace nest
{
class gap_forward : public ArchivingNode
{
public:
  void
  handle( SpikeEvent& e ) override
  {
    B_.spikes_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() );
  }
  void
  handle( GapJunctionEvent& e )
  {
    B_.sumj_g_ij_ += e.get_weight();
    B_.coefficients_[ 0 ] += e.get_weight();
  }
  void
  update( Time const& origin, const long from, const long to ) override
  {
    update_( origin, from, to, false );
  }
  bool
  wfr_update( Time const& origin, const long from, const long to )
  {
    return not update_( origin, from, to, true );
  }
  void
  init_buffers_()
  {
    const size_t buffer_size =
      kernel().connection_manager.get_min_delay() * ( kernel().simulation_manager.get_wfr_interpolation_order() + 1 );
    B_.coefficients_.resize( buffer_size, 0.0 );
    B_.last_v_.resize( kernel().connection_manager.get_min_delay(), 0.0 );
    B_.sumj_g_ij_ = 0.0;
  }
  void
  pre_run_hook() override
  {
    V_.decay_ = std::exp( -Time::get_resolution().get_ms() / P_.tau_ );
  }

private:
  bool
  update_( Time const& origin, const long from, const long to, const bool called_from_wfr_update )
  {
    const size_t order = kernel().simulation_manager.get_wfr_interpolation_order();
    const double tol = kernel().simulation_manager.get_wfr_tol();
    bool exceeded = false;
    const size_t buffer_size = kernel().connection_manager.get_min_delay() * ( order + 1 );
    std::vector< double > new_coefficients( buffer_size, 0.0 );
    double scratch[ 4 ];
    for ( long lag = from; lag < to; ++lag )
    {
      double gap = 0.0;
      switch ( kernel().simulation_manager.get_wfr_interpolation_order() )
      {
      case 0:
        gap = -B_.sumj_g_ij_ * S_.v_ + B_.coefficients_[ lag ];
        break;
      case 3:
        gap = -B_.sumj_g_ij_ * S_.v_ + B_.coefficients_[ lag * 4 ] + B_.coefficients_[ lag * 4 + 1 ] * 0.5;
        break;
      default:
        throw BadProperty( "Interpolation order must be 0, 1, or 3." );
      }
      S_.v_ = S_.v_ * V_.decay_ + gap;
      if ( called_from_wfr_update )
      {
        exceeded = exceeded or std::fabs( S_.v_ - B_.last_v_[ lag ] ) > tol;
        B_.last_v_[ lag ] = S_.v_;
        scratch[ 0 ] = S_.v_;
        new_coefficients[ lag * ( order + 1 ) ] = scratch[ 0 ];
      }
      else
      {
        S_.v_ += B_.spikes_.get_value( lag );
        if ( S_.v_ >= P_.theta_ )
        {
          S_.v_ = 0.0;
          set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
          SpikeEvent se;
          kernel().event_delivery_manager.send( *this, se, lag );
        }
      }
    }
    if ( not called_from_wfr_update )
    {
      for ( long temp = from; temp < to; ++temp )
        new_coefficients[ temp * ( order + 1 ) ] = S_.v_;
      std::vector< double >( kernel().connection_manager.get_min_delay(), 0.0 ).swap( B_.last_v_ );
    }
    GapJunctionEvent ge;
    ge.set_coeffarray( new_coefficients );
    kernel().event_delivery_manager.send_secondary( *this, ge );
    B_.sumj_g_ij_ = 0.0;
    std::vector< double >( buffer_size, 0.0 ).swap( B_.coefficients_ );
    return exceeded;
  }

  struct Parameters_
  {
    double tau_ = 10.0;
    double theta_ = 1.0;
  };
  struct State_
  {
    double v_ = 0.0;
  };
  struct Variables_
  {
    double decay_;
  };
  struct Buffers_
  {
    RingBuffer spikes_;
    double sumj_g_ij_;
    std::vector< double > coefficients_;
    std::vector< double > last_v_;
  };
  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;
};
}
#endif
