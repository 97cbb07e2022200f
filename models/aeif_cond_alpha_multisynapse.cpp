/*
 * aeif_cond_alpha_multisynapse: defaults, status handling, the right-hand
 * side for GSL, the integrator's set-up and the update loop (equations in
 * aeif_cond_alpha_multisynapse.h). The receptor count K is the length of
 * E_rev and tau_syn; pre_run_hook() sizes the state vector, the spike buffers
 * and the GSL stepper and evolution to it.
 */
#include "aeif_cond_alpha_multisynapse.h"

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

nest::RecordablesMap< nest::aeif_cond_alpha_multisynapse > nest::aeif_cond_alpha_multisynapse::recordablesMap_;

namespace nest
{
void
register_aeif_cond_alpha_multisynapse( const std::string& name )
{
  register_node_model< aeif_cond_alpha_multisynapse >( name );
}

template <>
void
RecordablesMap< aeif_cond_alpha_multisynapse >::create()
{
  insert_( names::V_m, &aeif_cond_alpha_multisynapse::get_y_elem_< aeif_cond_alpha_multisynapse::State_::V_M > );
  insert_( names::w, &aeif_cond_alpha_multisynapse::get_y_elem_< aeif_cond_alpha_multisynapse::State_::W > );
}

/* ---- right-hand side ----------------------------------------------------- */

extern "C" int
aeif_cond_alpha_multisynapse_dynamics( double, const double y[], double f[], void* pnode )
{
  typedef nest::aeif_cond_alpha_multisynapse::State_ S;

  assert( pnode );
  const nest::aeif_cond_alpha_multisynapse& node =
    *( reinterpret_cast< nest::aeif_cond_alpha_multisynapse* >( pnode ) );

  // y is GSL's trial state, not node.S_.y_.
  const bool is_refractory = node.S_.r_ > 0;

  // V_reset while refractory, otherwise at most V_peak_ (the parameter: V_.V_peak
  // is V_th when Delta_T == 0).
  const double& V = is_refractory ? node.P_.V_reset_ : std::min( y[ S::V_M ], node.P_.V_peak_ );
  const double& w = y[ S::W ];

  // Synaptic current, summed over the receptors: g_k (E_rev_k - V).
  double I_syn = 0.0;
  for ( size_t i = 0; i < node.P_.n_receptors(); ++i )
  {
    const size_t j = i * S::NUM_STATE_ELEMENTS_PER_RECEPTOR;
    I_syn += y[ S::G + j ] * ( node.P_.E_rev[ i ] - V );
  }

  // Exponential spike-initiation current; none for Delta_T == 0 (plain IAF).
  const double I_spike =
    node.P_.Delta_T == 0. ? 0 : ( node.P_.Delta_T * node.P_.g_L * std::exp( ( V - node.P_.V_th ) / node.P_.Delta_T ) );

  f[ S::V_M ] = is_refractory
    ? 0
    : ( -node.P_.g_L * ( V - node.P_.E_L ) + I_spike + I_syn - w + node.P_.I_e + node.B_.I_stim_ ) / node.P_.C_m;

  f[ S::W ] = ( node.P_.a * ( V - node.P_.E_L ) - w ) / node.P_.tau_w;

  // Each receptor's alpha-function conductance as two linear equations.
  for ( size_t i = 0; i < node.P_.n_receptors(); ++i )
  {
    const size_t j = i * S::NUM_STATE_ELEMENTS_PER_RECEPTOR;
    f[ S::DG + j ] = -y[ S::DG + j ] / node.P_.tau_syn[ i ];
    f[ S::G + j ] = y[ S::DG + j ] - y[ S::G + j ] / node.P_.tau_syn[ i ];
  }

  return GSL_SUCCESS;
}

/* ---- defaults -------------------------------------------------------------- */

aeif_cond_alpha_multisynapse::Parameters_::Parameters_()
  : V_peak_( 0.0 )
  , V_reset_( -60.0 )
  , t_ref_( 0.0 )
  , g_L( 30.0 )
  , C_m( 281.0 )
  , E_L( -70.6 )
  , Delta_T( 2.0 )
  , tau_w( 144.0 )
  , a( 4.0 )
  , b( 80.5 )
  , V_th( -50.4 )
  , tau_syn( 1, 2.0 )
  , E_rev( 1, 0.0 )
  , I_e( 0.0 )
  , gsl_error_tol( 1e-6 )
  , has_connections_( false )
{
}

aeif_cond_alpha_multisynapse::State_::State_( const Parameters_& p )
  : y_( STATE_VECTOR_MIN_SIZE, 0.0 )
  , r_( 0 )
{
  // At rest: V at the leak reversal potential, no adaptation, no conductance.
  y_[ 0 ] = p.E_L;
}

/* ---- status ---------------------------------------------------------------- */

void
aeif_cond_alpha_multisynapse::Parameters_::get( Dictionary& d ) const
{
  d[ names::C_m ] = C_m;
  d[ names::V_th ] = V_th;
  d[ names::t_ref ] = t_ref_;
  d[ names::g_L ] = g_L;
  d[ names::E_L ] = E_L;
  d[ names::V_reset ] = V_reset_;
  d[ names::n_receptors ] = static_cast< long >( n_receptors() );
  d[ names::E_rev ] = E_rev;
  d[ names::tau_syn ] = tau_syn;
  d[ names::a ] = a;
  d[ names::b ] = b;
  d[ names::Delta_T ] = Delta_T;
  d[ names::tau_w ] = tau_w;
  d[ names::I_e ] = I_e;
  d[ names::V_peak ] = V_peak_;
  d[ names::gsl_error_tol ] = gsl_error_tol;
  d[ names::has_connections ] = has_connections_;
}

void
aeif_cond_alpha_multisynapse::Parameters_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_th, V_th, node );
  update_value_param( d, names::V_peak, V_peak_, node );
  update_value_param( d, names::t_ref, t_ref_, node );
  update_value_param( d, names::E_L, E_L, node );
  update_value_param( d, names::V_reset, V_reset_, node );
  update_value_param( d, names::C_m, C_m, node );
  update_value_param( d, names::g_L, g_L, node );

  // The receptor arrays: a new receptor count needs both of them.
  const size_t old_n_receptors = n_receptors();
  const bool Erev_flag = d.update_value( names::E_rev, E_rev );
  const bool tau_flag = d.update_value( names::tau_syn, tau_syn );
  if ( Erev_flag or tau_flag )
  {
    if ( ( E_rev.size() != old_n_receptors or tau_syn.size() != old_n_receptors )
      and ( not Erev_flag or not tau_flag ) )
    {
      throw BadProperty( "A new number of receptor ports needs both E_rev and tau_syn." );
    }
    if ( E_rev.size() != tau_syn.size() )
    {
      throw BadProperty( "E_rev and tau_syn must have the same length." );
    }
    if ( tau_syn.size() < old_n_receptors and has_connections_ )
    {
      throw BadProperty( "The neuron has connections: its number of receptor ports cannot shrink." );
    }
    for ( size_t i = 0; i < tau_syn.size(); ++i )
    {
      if ( tau_syn[ i ] <= 0 )
      {
        throw BadProperty( "All synaptic time constants must be strictly positive." );
      }
    }
  }

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

  if ( V_reset_ >= V_peak_ )
  {
    throw BadProperty( "V_reset must be below V_peak." );
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

  if ( C_m <= 0 )
  {
    throw BadProperty( "Capacitance must be strictly positive." );
  }

  if ( t_ref_ < 0 )
  {
    throw BadProperty( "Refractory time must not be negative." );
  }

  if ( tau_w <= 0 )
  {
    throw BadProperty( "All time constants must be strictly positive." );
  }

  if ( gsl_error_tol <= 0. )
  {
    throw BadProperty( "gsl_error_tol must be strictly positive." );
  }
}

void
aeif_cond_alpha_multisynapse::State_::get( Dictionary& d ) const
{
  d[ names::V_m ] = y_[ V_M ];

  // dg and g of every receptor the state vector holds.
  std::vector< double > dg;
  std::vector< double > g;
  for ( size_t i = 0; i < ( ( y_.size() - State_::NUMBER_OF_FIXED_STATES_ELEMENTS ) / State_::NUM_STATE_ELEMENTS_PER_RECEPTOR );
        ++i )
  {
    dg.push_back( y_[ State_::DG + ( State_::NUM_STATE_ELEMENTS_PER_RECEPTOR * i ) ] );
    g.push_back( y_[ State_::G + ( State_::NUM_STATE_ELEMENTS_PER_RECEPTOR * i ) ] );
  }
  d[ names::dg ] = dg;
  d[ names::g ] = g;

  d[ names::w ] = y_[ W ];
}

void
aeif_cond_alpha_multisynapse::State_::set( const Dictionary& d, Node* node )
{
  update_value_param( d, names::V_m, y_[ V_M ], node );
  update_value_param( d, names::w, y_[ W ], node );
}

/* ---- buffers, constructors, destructor ------------------------------------- */

aeif_cond_alpha_multisynapse::Buffers_::Buffers_( aeif_cond_alpha_multisynapse& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
  , step_( Time::get_resolution().get_ms() )
  , IntegrationStep_( step_ )
  , I_stim_( 0.0 )
{
  // The GSL objects are allocated by init_buffers_() and pre_run_hook().
}

aeif_cond_alpha_multisynapse::Buffers_::Buffers_( const Buffers_& b, aeif_cond_alpha_multisynapse& n )
  : logger_( n )
  , s_( nullptr )
  , c_( nullptr )
  , e_( nullptr )
  , step_( b.step_ )
  , IntegrationStep_( b.IntegrationStep_ )
  , I_stim_( b.I_stim_ )
{
  // A copy gets GSL objects of its own.
}

aeif_cond_alpha_multisynapse::aeif_cond_alpha_multisynapse()
  : ArchivingNode()
  , P_()
  , S_( P_ )
  , V_() // zeroed: Variables_ that pre_run_hook leaves alone still pack to defined values
  , B_( *this )
{
  recordablesMap_.create();
}

aeif_cond_alpha_multisynapse::aeif_cond_alpha_multisynapse( const aeif_cond_alpha_multisynapse& n )
  : ArchivingNode( n )
  , P_( n.P_ )
  , S_( n.S_ )
  , V_( n.V_ )
  , B_( n.B_, *this )
{
}

aeif_cond_alpha_multisynapse::~aeif_cond_alpha_multisynapse()
{
  // init_buffers_() and pre_run_hook() may never have run.
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

/* ---- initialisation -------------------------------------------------------- */

void
aeif_cond_alpha_multisynapse::init_buffers_()
{
  // One spike buffer per receptor, made by pre_run_hook().
  B_.spikes_.clear();
  B_.currents_.clear();
  ArchivingNode::clear_history();

  B_.logger_.reset();

  B_.step_ = Time::get_resolution().get_ms();
  // A defined first guess; GSL adapts it in the first gsl_odeiv_evolve_apply().
  B_.IntegrationStep_ = B_.step_;

  // Error bound gsl_error_tol, absolute and relative, on y and on y'.
  if ( not B_.c_ )
  {
    B_.c_ = gsl_odeiv_control_yp_new( P_.gsl_error_tol, P_.gsl_error_tol );
  }
  else
  {
    gsl_odeiv_control_init( B_.c_, P_.gsl_error_tol, P_.gsl_error_tol, 0.0, 1.0 );
  }

  // Stepper and evolution depend on the state vector's length: pre_run_hook()
  // allocates them, and sets B_.sys_.dimension.
  B_.sys_.function = aeif_cond_alpha_multisynapse_dynamics;
  B_.sys_.jacobian = nullptr;
  B_.sys_.params = reinterpret_cast< void* >( this );

  B_.I_stim_ = 0.0;
}

void
aeif_cond_alpha_multisynapse::pre_run_hook()
{
  B_.logger_.init();

  // dg_k jumps by weight * e / tau_syn_k: g_k then peaks at the weight.
  V_.g0_.resize( P_.n_receptors() );
  for ( size_t i = 0; i < P_.n_receptors(); ++i )
  {
    V_.g0_[ i ] = 1.0 * numerics::e / P_.tau_syn[ i ];
  }

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

  B_.spikes_.resize( P_.n_receptors() );

  // V_M and W, then DG and G for each receptor; new receptors start at zero.
  S_.y_.resize(
    State_::NUMBER_OF_FIXED_STATES_ELEMENTS + ( State_::NUM_STATE_ELEMENTS_PER_RECEPTOR * P_.n_receptors() ), 0.0 );

  // Stepper and evolution for a system of this size.
  if ( B_.s_ )
  {
    gsl_odeiv_step_free( B_.s_ );
  }
  B_.s_ = gsl_odeiv_step_alloc( gsl_odeiv_step_rkf45, S_.y_.size() );

  if ( B_.e_ )
  {
    gsl_odeiv_evolve_free( B_.e_ );
  }
  B_.e_ = gsl_odeiv_evolve_alloc( S_.y_.size() );

  B_.sys_.dimension = S_.y_.size();
}

/* ---- update and input ------------------------------------------------------ */

void
aeif_cond_alpha_multisynapse::update( const Time& origin, const long from, const long to )
{
  assert( State_::V_M == 0 );

  for ( long lag = from; lag < to; ++lag )
  {
    double t = 0.0;

    // Integrate over (0, step_] in internal steps of GSL's choosing; spikes are
    // looked for after each of them. IntegrationStep_ carries over to the next
    // simulation step.
    while ( t < B_.step_ )
    {
      const int status = gsl_odeiv_evolve_apply( B_.e_,
        B_.c_,
        B_.s_,
        &B_.sys_,
        &t,
        B_.step_,
        &B_.IntegrationStep_,
        &S_.y_[ 0 ] );
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

    // Spikes due in this step kick each receptor's dg at its end.
    for ( size_t i = 0; i < P_.n_receptors(); ++i )
    {
      S_.y_[ State_::DG + ( State_::NUM_STATE_ELEMENTS_PER_RECEPTOR * i ) ] +=
        B_.spikes_[ i ].get_value( lag ) * V_.g0_[ i ];
    }

    // The step's current input drives the next step.
    B_.I_stim_ = B_.currents_.get_value( lag );

    B_.logger_.record_data( origin.get_steps() + lag );
  }
}

size_t
aeif_cond_alpha_multisynapse::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  // Receptor ports count from 1.
  if ( receptor_type <= 0 or receptor_type > P_.n_receptors() )
  {
    throw IncompatibleReceptorType( receptor_type, get_name(), "SpikeEvent" );
  }
  P_.has_connections_ = true;
  return receptor_type;
}

void
aeif_cond_alpha_multisynapse::handle( SpikeEvent& e )
{
  // Conductances only grow: inhibition comes from a low reversal potential.
  if ( e.get_weight() < 0 )
  {
    throw BadProperty( "Synaptic weights for conductance-based multisynapse models must be positive." );
  }
  assert( e.get_delay_steps() > 0 );
  assert( ( e.get_rport() > 0 ) and ( ( size_t ) e.get_rport() <= P_.n_receptors() ) );

  B_.spikes_[ e.get_rport() - 1 ].add_value(
    e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), e.get_weight() * e.get_multiplicity() );
}

void
aeif_cond_alpha_multisynapse::handle( CurrentEvent& e )
{
  assert( e.get_delay_steps() > 0 );

  const double I = e.get_current();
  const double w = e.get_weight();

  B_.currents_.add_value( e.get_rel_delivery_steps( kernel().simulation_manager.get_slice_origin() ), w * I );
}

void
aeif_cond_alpha_multisynapse::handle( DataLoggingRequest& e )
{
  B_.logger_.handle( e );
}

void
aeif_cond_alpha_multisynapse::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  ptmp.set( d, this );
  State_ stmp = S_;
  stmp.set( d, this );
  ArchivingNode::set_status( d );
  P_ = ptmp;
  S_ = stmp;
}
}  // namespace nest
