/*
 * hh_psc_alpha: defaults, status handling, the right-hand side for GSL, the
 * integrator's set-up and the update loop (equations in hh_psc_alpha.h). The
 * gating variables start at their steady state for V = -65 mV.
 */
#include "hh_psc_alpha.h"

#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::hh_psc_alpha > nest::hh_psc_alpha::recordablesMap_;

namespace nest
{
void
register_hh_psc_alpha( const std::string& name )
{
  register_node_model< hh_psc_alpha >( name );
}

template <>
void
RecordablesMap< hh_psc_alpha >::create()
{
  insert_( names::V_m, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::V_M > );
  insert_( names::I_syn_ex, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::I_EXC > );
  insert_( names::I_syn_in, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::I_INH > );
  insert_( names::Act_m, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::HH_M > );
  insert_( names::Inact_h, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::HH_H > );
  insert_( names::Act_n, &hh_psc_alpha::get_y_elem_< hh_psc_alpha::State_::HH_N > );
}
}  // namespace nest

extern "C" int
nest::hh_psc_alpha_dynamics( double, const double y[], double f[], void* pnode )
{
  typedef nest::hh_psc_alpha::State_ S;

  assert( pnode );
  const nest::hh_psc_alpha& node = *( reinterpret_cast< nest::hh_psc_alpha* >( pnode ) );

  // y is GSL's trial state, not node.S_.y_.
  const double& V = y[ S::V_M ];
  const double& m = y[ S::HH_M ];
  const double& h = y[ S::HH_H ];
  const double& n = y[ S::HH_N ];
  const double& dI_ex = y[ S::DI_EXC ];
  const double& I_ex = y[ S::I_EXC ];
  const double& dI_in = y[ S::DI_INH ];
  const double& I_in = y[ S::I_INH ];

  // Opening and closing rates of the gates (1/ms).
  const double alpha_n = ( 0.01 * ( V + 55. ) ) / ( 1. - std::exp( -( V + 55. ) / 10. ) );
  const double beta_n = 0.125 * std::exp( -( V + 65. ) / 80. );
  const double alpha_m = ( 0.1 * ( V + 40. ) ) / ( 1. - std::exp( -( V + 40. ) / 10. ) );
  const double beta_m = 4. * std::exp( -( V + 65. ) / 18. );
  const double alpha_h = 0.07 * std::exp( -( V + 65. ) / 20. );
  const double beta_h = 1. / ( 1. + std::exp( -( V + 35. ) / 10. ) );

  const double I_Na = node.P_.g_Na * m * m * m * h * ( V - node.P_.E_Na );
  const double I_K = node.P_.g_K * n * n * n * n * ( V - node.P_.E_K );
  const double I_L = node.P_.g_L * ( V - node.P_.E_L );

  // Synaptic inputs are currents; the inhibitory one is negative.
  f[ S::V_M ] = ( -( I_Na + I_K + I_L ) + node.B_.I_stim_ + node.P_.I_e + I_ex + I_in ) / node.P_.C_m;

  f[ S::HH_M ] = alpha_m * ( 1 - y[ S::HH_M ] ) - beta_m * y[ S::HH_M ];
  f[ S::HH_H ] = alpha_h * ( 1 - y[ S::HH_H ] ) - beta_h * y[ S::HH_H ];
  f[ S::HH_N ] = alpha_n * ( 1 - y[ S::HH_N ] ) - beta_n * y[ S::HH_N ];

  // Alpha-shaped currents as two linear first-order equations each.
  f[ S::DI_EXC ] = -dI_ex / node.P_.tau_synE;
  f[ S::I_EXC ] = dI_ex - ( I_ex / node.P_.tau_synE );
  f[ S::DI_INH ] = -dI_in / node.P_.tau_synI;
  f[ S::I_INH ] = dI_in - ( I_in / node.P_.tau_synI );

  return GSL_SUCCESS;
}

nest::hh_psc_alpha::Parameters_::Parameters_()
  : t_ref_( 2.0 )
  , g_Na( 12000.0 )
  , g_K( 3600.0 )
  , g_L( 30.0 )
  , C_m( 100.0 )
  , E_Na( 50.0 )
  , E_K( -77.0 )
  , E_L( -54.402 )
  , tau_synE( 0.2 )
  , tau_synI( 2.0 )
  , I_e( 0.0 )
{
}

nest::hh_psc_alpha::State_::State_( const Parameters_& )
  : r_( 0 )
{
  // Resting potential of the rate functions, not E_L.
  y_[ 0 ] = -65;
  for ( size_t i = 1; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = 0;
  }

  // Each gate at its steady state alpha / (alpha + beta) for that potential.
  const double alpha_n = ( 0.01 * ( y_[ 0 ] + 55. ) ) / ( 1. - std::exp( -( y_[ 0 ] + 55. ) / 10. ) );
  const double beta_n = 0.125 * std::exp( -( y_[ 0 ] + 65. ) / 80. );
  const double alpha_m = ( 0.1 * ( y_[ 0 ] + 40. ) ) / ( 1. - std::exp( -( y_[ 0 ] + 40. ) / 10. ) );
  const double beta_m = 4. * std::exp( -( y_[ 0 ] + 65. ) / 18. );
  const double alpha_h = 0.07 * std::exp( -( y_[ 0 ] + 65. ) / 20. );
  const double beta_h = 1. / ( 1. + std::exp( -( y_[ 0 ] + 35. ) / 10. ) );

  y_[ HH_H ] = alpha_h / ( alpha_h + beta_h );
  y_[ HH_N ] = alpha_n / ( alpha_n + beta_n );
  y_[ HH_M ] = alpha_m / ( alpha_m + beta_m );
}

nest::hh_psc_alpha::State_::State_( const State_& s )
  : r_( s.r_ )
{
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = s.y_[ i ];
  }
}

nest::hh_psc_alpha::State_&
nest::hh_psc_alpha::State_::operator=( const State_& s )
{
  r_ = s.r_;
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = s.y_[ i ];
  }
  return *this;
}

void
nest::hh_psc_alpha::Parameters_::get( Dictionary& d ) const
{
  d[ names::t_ref ] = t_ref_;
  d[ names::g_Na ] = g_Na;
  d[ names::g_K ] = g_K;
  d[ names::g_L ] = g_L;
  d[ names::E_Na ] = E_Na;
  d[ names::E_K ] = E_K;
  d[ names::E_L ] = E_L;
  d[ names::C_m ] = C_m;
  d[ names::tau_syn_ex ] = tau_synE;
  d[ names::tau_syn_in ] = tau_synI;
  d[ names::I_e ] = I_e;
}

void
nest::hh_psc_alpha::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::t_ref, t_ref_, node );
  update_value_param( d, names::C_m, C_m, node );
  update_value_param( d, names::g_Na, g_Na, node );
  update_value_param( d, names::E_Na, E_Na, node );
  update_value_param( d, names::g_K, g_K, node );
  update_value_param( d, names::E_K, E_K, node );
  update_value_param( d, names::g_L, g_L, node );
  update_value_param( d, names::E_L, E_L, node );

  update_value_param( d, names::tau_syn_ex, tau_synE, node );
  update_value_param( d, names::tau_syn_in, tau_synI, node );

  update_value_param( d, names::I_e, I_e, node );

  if ( C_m <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }
  if ( t_ref_ < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }
  if ( tau_synE <= 0 or tau_synI <= 0 )
  {
    throw BadProperty( "All time constants must be strictly positive." );
  }
  if ( g_K < 0 or g_Na < 0 or g_L < 0 )
  {
    throw BadProperty( "All conductances must be non-negative." );
  }
}

void
nest::hh_psc_alpha::State_::get( Dictionary& d ) const
{
  d[ names::V_m ] = y_[ V_M ];
  d[ names::Act_m ] = y_[ HH_M ];
  d[ names::Inact_h ] = y_[ HH_H ];
  d[ names::Act_n ] = y_[ HH_N ];
}

void
nest::hh_psc_alpha::State_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_m, y_[ V_M ], node );
  update_value_param( d, names::Act_m, y_[ HH_M ], node );
  update_value_param( d, names::Inact_h, y_[ HH_H ], node );
  update_value_param( d, names::Act_n, y_[ HH_N ], node );
  if ( y_[ HH_M ] < 0 or y_[ HH_H ] < 0 or y_[ HH_N ] < 0 )
  {
    throw BadProperty( "Gating variables must not be negative." );
  }
}

nest::hh_psc_alpha::Buffers_::Buffers_( hh_psc_alpha& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // The GSL objects are allocated by init_buffers_().
}

nest::hh_psc_alpha::Buffers_::Buffers_( const Buffers_&, hh_psc_alpha& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // A copy gets GSL objects of its own in init_buffers_().
}

nest::hh_psc_alpha::hh_psc_alpha()
  : ArchivingNode()
  , P_()
  , S_( P_ )
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

nest::hh_psc_alpha::hh_psc_alpha( const hh_psc_alpha& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

nest::hh_psc_alpha::~hh_psc_alpha()
{
  // init_buffers_() may never have run.
  if ( B_.s_ )
  {
    gsl_odeiv_step_free( B_.s_ );
  }
  if ( B_.c_ )
  {
    gsl_odeiv_control_free( B_.c_ );
  }
  if ( B_.e_ )
  {
    gsl_odeiv_evolve_free( B_.e_ );
  }
}

void
nest::hh_psc_alpha::init_buffers_()
{
  B_.spike_exc_.clear();
  B_.spike_inh_.clear();
  B_.currents_.clear();
  ArchivingNode::clear_history();

  B_.logger_.reset();

  B_.step_ = Time::get_resolution().get_ms();
  B_.IntegrationStep_ = B_.step_;

  if ( not B_.s_ )
  {
    B_.s_ = gsl_odeiv_step_alloc( gsl_odeiv_step_rkf45, State_::STATE_VEC_SIZE );
  }
  else
  {
    gsl_odeiv_step_reset( B_.s_ );
  }

  // Absolute error bound 1e-3 on y, no relative bound.
  if ( not B_.c_ )
  {
    B_.c_ = gsl_odeiv_control_y_new( 1e-3, 0.0 );
  }
  else
  {
    gsl_odeiv_control_init( B_.c_, 1e-3, 0.0, 1.0, 0.0 );
  }

  if ( not B_.e_ )
  {
    B_.e_ = gsl_odeiv_evolve_alloc( State_::STATE_VEC_SIZE );
  }
  else
  {
    gsl_odeiv_evolve_reset( B_.e_ );
  }

  B_.sys_.function = hh_psc_alpha_dynamics;
  B_.sys_.jacobian = nullptr;
  B_.sys_.dimension = State_::STATE_VEC_SIZE;
  B_.sys_.params = reinterpret_cast< void* >( this );

  B_.I_stim_ = 0.0;
}

void
nest::hh_psc_alpha::pre_run_hook()
{
  B_.logger_.init();

  // A unit weight lifts dI by e / tau, so that I peaks at 1 pA after tau.
  V_.PSCurrInit_E_ = 1.0 * numerics::e / P_.tau_synE;
  V_.PSCurrInit_I_ = 1.0 * numerics::e / P_.tau_synI;
  V_.RefractoryCounts_ = Time( Time::ms( P_.t_ref_ ) ).get_steps();

  assert( V_.RefractoryCounts_ >= 0 );
}

void
nest::hh_psc_alpha::update( Time const& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    double t = 0.0;
    const double U_old = S_.y_[ State_::V_M ];

    // Integrate over (0, step_]: each call advances t by at most one internal
    // step and stops at step_; IntegrationStep_ keeps GSL's step size for the
    // next call and the next simulation step.
    while ( t < B_.step_ )
    {
      const int status = gsl_odeiv_evolve_apply( B_.e_,
        B_.c_,
        B_.s_,
        &B_.sys_,
        &t,
        B_.step_,
        &B_.IntegrationStep_,
        S_.y_ );
      if ( status != GSL_SUCCESS )
      {
        throw GSLSolverFailure( get_name(), status );
      }
    }

    // Spikes due in this step start their current transients at its end.
    S_.y_[ State_::DI_EXC ] += B_.spike_exc_.get_value( lag ) * V_.PSCurrInit_E_;
    S_.y_[ State_::DI_INH ] += B_.spike_inh_.get_value( lag ) * V_.PSCurrInit_I_;

    // A spike: V at or above 0 mV and falling, i.e. just past the peak of an
    // action potential, and not within t_ref of the last spike.
    if ( S_.r_ > 0 )
    {
      --S_.r_;
    }
    else if ( S_.y_[ State_::V_M ] >= 0 and U_old > S_.y_[ State_::V_M ] )
    {
      S_.r_ = V_.RefractoryCounts_;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );

      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    B_.logger_.record_data( origin.get_steps() + lag );

    // The step's current input drives the next step.
    B_.I_stim_ = B_.currents_.get_value( lag );
  }
}

void
nest::hh_psc_alpha::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  if ( e.get_weight() > 0.0 )
  {
    B_.spike_exc_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
      e.get_weight() * e.get_multiplicity() );
  }
  else
  {
    // Inhibitory currents keep their sign.
    B_.spike_inh_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
      e.get_weight() * e.get_multiplicity() );
  }
}

void
nest::hh_psc_alpha::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * c );
}

void
nest::hh_psc_alpha::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
