/*
 * iaf_cond_alpha: defaults, status handling, the right-hand side for GSL, the
 * integrator's set-up and the update loop (equations in iaf_cond_alpha.h).
 * Each simulation step is integrated from its start to its end by repeated
 * gsl_odeiv_evolve_apply() calls with an adaptive internal step that carries
 * over to the next step; threshold, reset, refractoriness and the step's
 * spike input are then applied on the grid.
 */
#include "iaf_cond_alpha.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "dict_util.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_impl.h"
#include "numerics.h"
#include "ring_buffer_impl.h"
#include "universal_data_logger_impl.h"

nest::RecordablesMap< nest::iaf_cond_alpha > nest::iaf_cond_alpha::recordablesMap_;

namespace nest
{
void
register_iaf_cond_alpha( const std::string& name )
{
  register_node_model< iaf_cond_alpha >( name );
}

template <>
void
RecordablesMap< iaf_cond_alpha >::create()
{
  insert_( names::V_m, &iaf_cond_alpha::get_y_elem_< iaf_cond_alpha::State_::V_M > );
  insert_( names::g_ex, &iaf_cond_alpha::get_y_elem_< iaf_cond_alpha::State_::G_EXC > );
  insert_( names::g_in, &iaf_cond_alpha::get_y_elem_< iaf_cond_alpha::State_::G_INH > );
  insert_( names::t_ref_remaining, &iaf_cond_alpha::get_r_ );
}
}  // namespace nest

extern "C" int
nest::iaf_cond_alpha_dynamics( double, const double y[], double f[], void* pnode )
{
  typedef nest::iaf_cond_alpha::State_ S;

  assert( pnode );
  const nest::iaf_cond_alpha& node = *( reinterpret_cast< nest::iaf_cond_alpha* >( pnode ) );

  // y is GSL's trial state, not node.S_.y.
  const bool is_refractory = node.S_.r > 0;

  // The driving force sees V_reset while refractory and at most V_th otherwise.
  const double V = is_refractory ? node.P_.V_reset : std::min( y[ S::V_M ], node.P_.V_th );

  const double I_syn_exc = y[ S::G_EXC ] * ( V - node.P_.E_ex );
  const double I_syn_inh = y[ S::G_INH ] * ( V - node.P_.E_in );
  const double I_leak = node.P_.g_L * ( V - node.P_.E_L );

  f[ S::V_M ] = is_refractory ? 0.0 : ( -I_leak - I_syn_exc - I_syn_inh + node.B_.I_stim_ + node.P_.I_e ) / node.P_.C_m;

  // Alpha-function conductances as two linear first-order equations each.
  f[ S::DG_EXC ] = -y[ S::DG_EXC ] / node.P_.tau_synE;
  f[ S::G_EXC ] = y[ S::DG_EXC ] - ( y[ S::G_EXC ] / node.P_.tau_synE );

  f[ S::DG_INH ] = -y[ S::DG_INH ] / node.P_.tau_synI;
  f[ S::G_INH ] = y[ S::DG_INH ] - ( y[ S::G_INH ] / node.P_.tau_synI );

  return GSL_SUCCESS;
}

nest::iaf_cond_alpha::Parameters_::Parameters_()
  : V_th( -55.0 )
  , V_reset( -60.0 )
  , t_ref( 2.0 )
  , g_L( 16.6667 )
  , C_m( 250.0 )
  , E_ex( 0.0 )
  , E_in( -85.0 )
  , E_L( -70.0 )
  , tau_synE( 0.2 )
  , tau_synI( 2.0 )
  , I_e( 0.0 )
{
}

nest::iaf_cond_alpha::State_::State_( const Parameters_& p )
  : r( 0 )
{
  // At rest: V at the leak reversal potential, no synaptic conductance.
  y[ V_M ] = p.E_L;
  for ( size_t i = 1; i < STATE_VEC_SIZE; ++i )
  {
    y[ i ] = 0;
  }
}

nest::iaf_cond_alpha::State_::State_( const State_& s )
  : r( s.r )
{
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y[ i ] = s.y[ i ];
  }
}

nest::iaf_cond_alpha::State_&
nest::iaf_cond_alpha::State_::operator=( const State_& s )
{
  r = s.r;
  for ( size_t i = 0; i < STATE_VEC_SIZE; ++i )
  {
    y[ i ] = s.y[ i ];
  }
  return *this;
}

nest::iaf_cond_alpha::Buffers_::Buffers_( iaf_cond_alpha& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // The GSL objects are allocated by init_buffers_().
}

nest::iaf_cond_alpha::Buffers_::Buffers_( const Buffers_&, iaf_cond_alpha& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
{
  // A copy gets GSL objects of its own in init_buffers_().
}

void
nest::iaf_cond_alpha::Parameters_::get( Dictionary& d ) const
{
  d[ names::V_th ] = V_th;
  d[ names::V_reset ] = V_reset;
  d[ names::t_ref ] = t_ref;
  d[ names::g_L ] = g_L;
  d[ names::E_L ] = E_L;
  d[ names::E_ex ] = E_ex;
  d[ names::E_in ] = E_in;
  d[ names::C_m ] = C_m;
  d[ names::tau_syn_ex ] = tau_synE;
  d[ names::tau_syn_in ] = tau_synI;
  d[ names::I_e ] = I_e;
}

void
nest::iaf_cond_alpha::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_th, V_th, node );
  update_value_param( d, names::V_reset, V_reset, node );
  update_value_param( d, names::t_ref, t_ref, node );
  update_value_param( d, names::E_L, E_L, node );

  update_value_param( d, names::E_ex, E_ex, node );
  update_value_param( d, names::E_in, E_in, node );

  update_value_param( d, names::C_m, C_m, node );
  update_value_param( d, names::g_L, g_L, node );

  update_value_param( d, names::tau_syn_ex, tau_synE, node );
  update_value_param( d, names::tau_syn_in, tau_synI, node );

  update_value_param( d, names::I_e, I_e, node );

  if ( V_reset >= V_th )
  {
    throw BadProperty( "Reset potential must be smaller than threshold." );
  }
  if ( C_m <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }
  if ( t_ref < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }
  if ( tau_synE <= 0 or tau_synI <= 0 )
  {
    throw BadProperty( "All time constants must be strictly positive." );
  }
}

void
nest::iaf_cond_alpha::State_::get( Dictionary& d ) const
{
  d[ names::V_m ] = y[ V_M ];
  d[ names::g_ex ] = y[ G_EXC ];
  d[ names::dg_ex ] = y[ DG_EXC ];
  d[ names::g_in ] = y[ G_INH ];
  d[ names::dg_in ] = y[ DG_INH ];
}

void
nest::iaf_cond_alpha::State_::set( const Dictionary& d, const Parameters_&, Node* node )
{
  update_value_param( d, names::V_m, y[ V_M ], node );
  update_value_param( d, names::g_ex, y[ G_EXC ], node );
  update_value_param( d, names::dg_ex, y[ DG_EXC ], node );
  update_value_param( d, names::g_in, y[ G_INH ], node );
  update_value_param( d, names::dg_in, y[ DG_INH ], node );
}

nest::iaf_cond_alpha::iaf_cond_alpha()
  : ArchivingNode()
  , P_()
  , S_( P_ )
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

nest::iaf_cond_alpha::iaf_cond_alpha( const iaf_cond_alpha& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

nest::iaf_cond_alpha::~iaf_cond_alpha()
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
nest::iaf_cond_alpha::init_buffers_()
{
  ArchivingNode::clear_history();

  B_.spike_exc_.clear();
  B_.spike_inh_.clear();
  B_.currents_.clear();

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

  B_.sys_.function = iaf_cond_alpha_dynamics;
  B_.sys_.jacobian = nullptr;
  B_.sys_.dimension = State_::STATE_VEC_SIZE;
  B_.sys_.params = reinterpret_cast< void* >( this );

  B_.I_stim_ = 0.0;
}

void
nest::iaf_cond_alpha::pre_run_hook()
{
  B_.logger_.init();

  // A unit weight lifts dg by e / tau, so that g peaks at 1 nS after tau.
  V_.PSConInit_E = 1.0 * numerics::e / P_.tau_synE;
  V_.PSConInit_I = 1.0 * numerics::e / P_.tau_synI;
  V_.RefractoryCounts = Time( Time::ms( P_.t_ref ) ).get_steps();

  assert( V_.RefractoryCounts >= 0 );
}

void
nest::iaf_cond_alpha::update( Time const& origin, const long from, const long to )
{
  for ( long lag = from; lag < to; ++lag )
  {
    double t = 0.0;

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
        S_.y );
      if ( status != GSL_SUCCESS )
      {
        throw GSLSolverFailure( get_name(), status );
      }
    }

    if ( S_.r )
    {
      // Refractory: count down and hold V at the reset potential.
      --S_.r;
      S_.y[ State_::V_M ] = P_.V_reset;
    }
    else if ( S_.y[ State_::V_M ] >= P_.V_th )
    {
      S_.r = V_.RefractoryCounts;
      S_.y[ State_::V_M ] = P_.V_reset;

      set_spiketime( Time::step( origin.get_steps() + lag + 1 ) );

      SpikeEvent se;
      kernel().event_delivery_manager.send( *this, se, lag );
    }

    // Spikes due in this step start their conductance transients at its end.
    S_.y[ State_::DG_EXC ] += B_.spike_exc_.get_value( lag ) * V_.PSConInit_E;
    S_.y[ State_::DG_INH ] += B_.spike_inh_.get_value( lag ) * V_.PSConInit_I;

    // The step's current input drives the next step.
    B_.I_stim_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

void
nest::iaf_cond_alpha::handle( SpikeEvent& e )
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
nest::iaf_cond_alpha::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  B_.currents_.add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_current() );
}

void
nest::iaf_cond_alpha::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}
