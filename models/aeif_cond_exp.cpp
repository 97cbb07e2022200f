/*
 * aeif_cond_exp: defaults, status handling, the right-hand side for GSL, the
 * integrator's set-up and the update loop (equations in aeif_cond_exp.h).
 * Spike detection, reset and the adaptation jump happen inside the
 * integration loop of a step, after each internal GSL step, so that the
 * integrator never has to follow the exponential divergence far past V_peak.
 */
#include "aeif_cond_exp.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "nest_names.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::aeif_cond_exp > nest::aeif_cond_exp::recordablesMap_;

namespace nest
{
void
register_aeif_cond_exp( const std::string& name )
{
  register_node_model< aeif_cond_exp >( name );
}

template <>
void
RecordablesMap< aeif_cond_exp >::create()
{
  insert_( names::V_m, &aeif_cond_exp::get_y_elem_< aeif_cond_exp::State_::V_M > );
  insert_( names::g_ex, &aeif_cond_exp::get_y_elem_< aeif_cond_exp::State_::G_EXC > );
  insert_( names::g_in, &aeif_cond_exp::get_y_elem_< aeif_cond_exp::State_::G_INH > );
  insert_( names::w, &aeif_cond_exp::get_y_elem_< aeif_cond_exp::State_::W > );
}
}  // namespace nest

extern "C" int
nest::aeif_cond_exp_dynamics( double, const double y[], double f[], void* pnode )
{
  typedef nest::aeif_cond_exp::State_ S;

  assert( pnode );
  const nest::aeif_cond_exp& node = *( reinterpret_cast< nest::aeif_cond_exp* >( pnode ) );

  // y is GSL's trial state, not node.S_.y_.
  const bool is_refractory = node.S_.r_ > 0;

  // V_reset while refractory, otherwise at most V_peak_ (the parameter: V_.V_peak
  // is V_th when Delta_T == 0).
  const double& V = is_refractory ? node.P_.V_reset_ : std::min( y[ S::V_M ], node.P_.V_peak_ );
  const double& g_ex = y[ S::G_EXC ];
  const double& g_in = y[ S::G_INH ];
  const double& w = y[ S::W ];

  const double I_syn_exc = g_ex * ( V - node.P_.E_ex );
  const double I_syn_inh = g_in * ( V - node.P_.E_in );

  // Exponential spike-initiation current; none for Delta_T == 0 (plain IAF).
  const double I_spike =
    node.P_.Delta_T == 0. ? 0. : ( node.P_.g_L * node.P_.Delta_T * std::exp( ( V - node.P_.V_th ) / node.P_.Delta_T ) );

  f[ S::V_M ] = is_refractory
    ? 0.
    : ( -node.P_.g_L * ( V - node.P_.E_L ) + I_spike - I_syn_exc - I_syn_inh - w + node.P_.I_e + node.B_.I_stim_ )
      / node.P_.C_m;

  f[ S::G_EXC ] = -g_ex / node.P_.tau_syn_ex;
  f[ S::G_INH ] = -g_in / node.P_.tau_syn_in;

  f[ S::W ] = ( node.P_.a * ( V - node.P_.E_L ) - w ) / node.P_.tau_w;

  return GSL_SUCCESS;
}

nest::aeif_cond_exp::Parameters_::Parameters_()
  : V_peak_( 0.0 )
  , V_reset_( -60.0 )
  , t_ref_( 0.0 )
  , g_L( 30.0 )
  , C_m( 281.0 )
  , E_ex( 0.0 )
  , E_in( -85.0 )
  , E_L( -70.6 )
  , Delta_T( 2.0 )
  , tau_w( 144.0 )
  , a( 4.0 )
  , b( 80.5 )
  , V_th( -50.4 )
  , tau_syn_ex( 0.2 )
  , tau_syn_in( 2.0 )
  , I_e( 0.0 )
  , gsl_error_tol( 1e-6 )
{
}

nest::aeif_cond_exp::State_::State_( const Parameters_& p )
  : r_( 0 )
{
  // At rest: V at the leak reversal potential, no conductance, no adaptation.
  y_[ 0 ] = p.E_L;
  for ( size_t i = 1; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = 0;
  }
}

nest::aeif_cond_exp::State_::State_( const State_& s )
  : r_( s.r_ )
{
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = s.y_[ i ];
  }
}

nest::aeif_cond_exp::State_&
nest::aeif_cond_exp::State_::operator=( const State_& s )
{
  r_ = s.r_;
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y_[ i ] = s.y_[ i ];
  }
  return *this;
}

void
nest::aeif_cond_exp::Parameters_::get( Dictionary& d ) const
{
  d[ names::C_m ] = C_m;
  d[ names::V_th ] = V_th;
  d[ names::t_ref ] = t_ref_;
  d[ names::g_L ] = g_L;
  d[ names::E_L ] = E_L;
  d[ names::V_reset ] = V_reset_;
  d[ names::E_ex ] = E_ex;
  d[ names::E_in ] = E_in;
  d[ names::tau_syn_ex ] = tau_syn_ex;
  d[ names::tau_syn_in ] = tau_syn_in;
  d[ names::a ] = a;
  d[ names::b ] = b;
  d[ names::Delta_T ] = Delta_T;
  d[ names::tau_w ] = tau_w;
  d[ names::I_e ] = I_e;
  d[ names::V_peak ] = V_peak_;
  d[ names::gsl_error_tol ] = gsl_error_tol;
}

void
nest::aeif_cond_exp::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_th, V_th, node );
  update_value_param( d, names::V_peak, V_peak_, node );
  update_value_param( d, names::t_ref, t_ref_, node );
  update_value_param( d, names::E_L, E_L, node );
  update_value_param( d, names::V_reset, V_reset_, node );
  update_value_param( d, names::E_ex, E_ex, node );
  update_value_param( d, names::E_in, E_in, node );

  update_value_param( d, names::C_m, C_m, node );
  update_value_param( d, names::g_L, g_L, node );

  update_value_param( d, names::tau_syn_ex, tau_syn_ex, node );
  update_value_param( d, names::tau_syn_in, tau_syn_in, node );

  update_value_param( d, names::a, a, node );
  update_value_param( d, names::b, b, node );
  update_value_param( d, names::Delta_T, Delta_T, node );
  update_value_param( d, names::tau_w, tau_w, node );

  update_value_param( d, names::I_e, I_e, node );

  update_value_param( d, names::gsl_error_tol, gsl_error_tol, node );

  if ( V_peak_ < V_th )
  {
    throw BadProperty( "V_peak must not be below V_th." );
  }

  if ( Delta_T < 0. )
  {
    throw BadProperty( "Delta_T must not be negative." );
  }
  else if ( Delta_T > 0. )
  {
    // exp((V_peak - V_th) / Delta_T) must stay finite, with a margin of 1e20
    // for the products the right-hand side forms with it.
    const double max_exp_arg = std::log( std::numeric_limits< double >::max() / 1e20 );
    if ( ( V_peak_ - V_th ) / Delta_T >= max_exp_arg )
    {
      throw BadProperty(
        "V_peak, V_th and Delta_T would make the exponential term overflow at a spike; "
        "increase Delta_T or lower V_peak." );
    }
  }

  if ( V_reset_ >= V_peak_ )
  {
    throw BadProperty( "V_reset must be below V_peak." );
  }

  if ( C_m <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }

  if ( t_ref_ < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }

  if ( tau_syn_ex <= 0 or tau_syn_in <= 0 or tau_w <= 0 )
  {
    throw BadProperty( "All time constants must be strictly positive." );
  }

  if ( gsl_error_tol <= 0. )
  {
    throw BadProperty( "gsl_error_tol must be strictly positive." );
  }
}

void
nest::aeif_cond_exp::State_::get( Dictionary& d ) const
{
  d[ names::V_m ] = y_[ V_M ];
  d[ names::g_ex ] = y_[ G_EXC ];
  d[ names::g_in ] = y_[ G_INH ];
  d[ names::w ] = y_[ W ];
}

void
nest::aeif_cond_exp::State_::set( const Dictionary& d, const Parameters_&, Node* node )
{
  update_value_param( d, names::V_m, y_[ V_M ], node );
  update_value_param( d, names::g_ex, y_[ G_EXC ], node );
  update_value_param( d, names::g_in, y_[ G_INH ], node );
  update_value_param( d, names::w, y_[ W ], node );
  if ( y_[ G_EXC ] < 0 or y_[ G_INH ] < 0 )
  {
    throw BadProperty( "Conductances must not be negative." );
  }
}

nest::aeif_cond_exp::Buffers_::Buffers_( aeif_cond_exp& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // The GSL objects are allocated by init_buffers_().
}

nest::aeif_cond_exp::Buffers_::Buffers_( const Buffers_&, aeif_cond_exp& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // A copy gets GSL objects of its own in init_buffers_().
}

nest::aeif_cond_exp::aeif_cond_exp()
  : ArchivingNode()
  , P_()
  , S_( P_ )
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

nest::aeif_cond_exp::aeif_cond_exp( const aeif_cond_exp& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

nest::aeif_cond_exp::~aeif_cond_exp()
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
nest::aeif_cond_exp::init_buffers_()
{
  B_.spike_exc_.clear();
  B_.spike_inh_.clear();
  B_.currents_.clear();
  ArchivingNode::clear_history();

  B_.logger_.reset();

  B_.step_ = Time::get_resolution().get_ms();
  // A defined first guess; GSL adapts it in the first gsl_odeiv_evolve_apply().
  B_.IntegrationStep_ = B_.step_;

  if ( not B_.s_ )
  {
    B_.s_ = gsl_odeiv_step_alloc( gsl_odeiv_step_rkf45, State_::STATE_VEC_SIZE );
  }
  else
  {
    gsl_odeiv_step_reset( B_.s_ );
  }

  // Error bound gsl_error_tol, absolute and relative, on y and on y'.
  if ( not B_.c_ )
  {
    B_.c_ = gsl_odeiv_control_yp_new( P_.gsl_error_tol, P_.gsl_error_tol );
  }
  else
  {
    gsl_odeiv_control_init( B_.c_, P_.gsl_error_tol, P_.gsl_error_tol, 0.0, 1.0 );
  }

  if ( not B_.e_ )
  {
    B_.e_ = gsl_odeiv_evolve_alloc( State_::STATE_VEC_SIZE );
  }
  else
  {
    gsl_odeiv_evolve_reset( B_.e_ );
  }

  B_.sys_.jacobian = nullptr;
  B_.sys_.dimension = State_::STATE_VEC_SIZE;
  B_.sys_.params = reinterpret_cast< void* >( this );
  B_.sys_.function = aeif_cond_exp_dynamics;

  B_.I_stim_ = 0.0;
}

void
nest::aeif_cond_exp::pre_run_hook()
{
  B_.logger_.init();

  // Without the exponential term (Delta_T == 0) the model is an IAF neuron
  // with threshold V_th.
  if ( P_.Delta_T > 0. )
  {
    V_.V_peak = P_.V_peak_;
  }
  else
  {
    V_.V_peak = P_.V_th;
  }

  V_.refractory_counts_ = Time( Time::ms( P_.t_ref_ ) ).get_steps();
}

void
nest::aeif_cond_exp::update( const Time& origin, const long from, const long to )
{
  assert( State_::V_M == 0 );

  for ( long lag = from; lag < to; ++lag )
  {
    double t = 0.0;

    // Integrate over (0, step_] in internal steps of GSL's choosing; spikes are
    // looked for after each of them.
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

      // V may diverge upwards at a spike; anything else this far out is a
      // sign of an unstable integration.
      if ( S_.y_[ State_::V_M ] < -1e3 or S_.y_[ State_::W ] < -1e6 or S_.y_[ State_::W ] > 1e6 )
      {
        throw NumericalInstability( get_name() );
      }

      if ( S_.r_ > 0 )
      {
        S_.y_[ State_::V_M ] = P_.V_reset_;
      }
      else if ( S_.y_[ State_::V_M ] >= V_.V_peak )
      {
        S_.y_[ State_::V_M ] = P_.V_reset_;
        S_.y_[ State_::W ] += P_.b;

        // One extra count: the counter is decremented right after this loop.
        // Without a refractory period it stays 0, so that the rest of this
        // step is not clamped.
        S_.r_ = V_.refractory_counts_ > 0 ? V_.refractory_counts_ + 1 : 0;

        set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );
        SpikeEvent se;
        kernel().event_delivery_manager.send( *this, se, lag );
      }
    }

    if ( S_.r_ > 0 )
    {
      --S_.r_;
    }

    // Spikes due in this step add to the conductances at its end.
    S_.y_[ State_::G_EXC ] += B_.spike_exc_.get_value( lag );
    S_.y_[ State_::G_INH ] += B_.spike_inh_.get_value( lag );

    // The step's current input drives the next step.
    B_.I_stim_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
nest::aeif_cond_exp::handle( SpikeEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  if ( e.get_weight() > 0.0 )
  {
    B_.spike_exc_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
      e.get_weight() * e.get_multiplicity() );
  }
  else
  {
    // Inhibitory conductances are positive: the weight's magnitude.
    B_.spike_inh_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ),
      -e.get_weight() * e.get_multiplicity() );
  }
}

void
nest::aeif_cond_exp::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double c = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * c );
}

void
nest::aeif_cond_exp::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
