/*
 * Native self-test of this project's models and NEST-API shim: checks the
 * models against their equations (closed-form PSCs, PSPs and DC responses, an
 * independent Euler step for izhikevich), and the shim against NEST's
 * semantics (Time rounding, ring buffers, receptor checks, status
 * dictionaries, device windows). These are the references the translated
 * kernels are compared with, so they must be right on their own. With GSL, the
 * ODE models (iaf_cond_alpha, aeif_cond_exp, hh_psc_alpha) too (ode_* checks).
 * Usage: nestcl_models_selftest [CHECK...]; no argument runs every check.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "iaf_psc_alpha.h"
#include "iaf_psc_delta.h"
#include "iaf_psc_exp.h"
#include "iaf_psc_exp_multisynapse.h"
#include "izhikevich.h"
#include "poisson_generator.h"
#ifdef NESTCL_WITH_ODE_MODELS
#include "aeif_cond_exp.h"
#include "hh_psc_alpha.h"
#include "iaf_cond_alpha.h"
#endif
#include "ring_buffer.h"
#include "random_generators.h"
#include "shim_driver.hpp"

using namespace nestcl_test;

namespace
{
const double H = 0.1;
const long MIN_DELAY = 10;
const long MAX_DELAY = 20;

std::string
fmt( const char* f, double a, double b = 0, double c = 0 )
{
  char buf[ 256 ];
  std::snprintf( buf, sizeof buf, f, a, b, c );
  return buf;
}

/* Relative error with an absolute floor for values near zero. */
bool
close( double got, double want, double rel, double abs_floor )
{
  return std::fabs( got - want ) <= rel * std::fabs( want ) + abs_floor;
}

/*
 * Runs node for steps from 0 with a multimeter of interval 1, calling
 * deliver(origin) at the start of each super step; returns rows
 * (stamp, recordables in name order).
 */
std::vector< std::vector< double > >
run_recorded( nest::Node& node, long steps, const std::function< void( long ) >& deliver )
{
  nest::DataLoggingRequest dlr( 1 );
  node.handles_test_event( dlr, 0 );
  for ( long origin = 0; origin < steps; origin += MIN_DELAY )
  {
    set_slice_origin( origin );
    deliver( origin );
    for ( long lag = 0; lag < MIN_DELAY && origin + lag < steps; ++lag )
    {
      update_lag( node, lag );
    }
  }
  node.handle( dlr );
  return dlr.rows;
}

std::vector< long >
spike_steps()
{
  std::vector< long > s;
  for ( const auto& e : nest::kernel().event_delivery_manager.emitted_spikes_ )
  {
    s.push_back( e.step );
  }
  nest::kernel().event_delivery_manager.emitted_spikes_.clear();
  return s;
}

template< class M >
void
prepare( M& m, const nest::Dictionary& d )
{
  m.set_status( d );
  m.init();
  static_cast< nest::Node& >( m ).pre_run_hook();
}

int
check_time()
{
  using nest::Time;
  Time::set_resolution( 0.1 );
  if ( Time::get_resolution().get_ms() != 0.1 || Time::get_resolution().get_tics() != 100 )
  {
    return fail( "time", "resolution 0.1 ms is not 100 tics" );
  }
  // ms -> tics rounds to the nearest tic, tics -> steps rounds up.
  const double ms[] = { 0.0, 2.0, 2.04, 1.25, 0.1, 0.0004, 0.0006, 3.3 };
  const long steps[] = { 0, 20, 21, 13, 1, 0, 1, 33 };
  for ( size_t k = 0; k < sizeof ms / sizeof ms[ 0 ]; ++k )
  {
    const long got = Time( Time::ms( ms[ k ] ) ).get_steps();
    if ( got != steps[ k ] )
    {
      return fail( "time", fmt( "Time(ms(%g)).get_steps() = %g, expected %g", ms[ k ], got, steps[ k ] ) );
    }
  }
  Time::set_resolution( 0.25 );
  const bool ok = Time::get_resolution().get_tics() == 250 && Time( Time::ms( 1.0 ) ).get_steps() == 4
    && Time( Time::ms( 1.1 ) ).get_steps() == 5 && Time( Time::step( 3 ) ).get_ms() == 0.75;
  Time::set_resolution( 0.1 );
  if ( !ok )
  {
    return fail( "time", "resolution 0.25 ms conversions" );
  }
  if ( Time( Time::step( 7 ) ).get_steps() != 7 || !( Time::pos_inf() > Time( Time::ms( 1e9 ) ) ) )
  {
    return fail( "time", "step round trip or pos_inf" );
  }
  return 0;
}

int
check_ring_buffers()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  set_slice_origin( 40 );
  nest::RingBuffer rb;
  if ( rb.size() != static_cast< size_t >( MIN_DELAY + MAX_DELAY ) )
  {
    return fail( "ring", "RingBuffer is not min_delay + max_delay long" );
  }
  rb.add_value( 3, 1.5 );
  rb.add_value( 3, 0.25 );
  rb.add_value( 29, 2.0 );
  if ( rb.get_value( 3 ) != 1.75 || rb.get_value( 3 ) != 0.0 )
  {
    return fail( "ring", "get_value must return the sum once, then zero" );
  }
  // Offset 29 from origin 40 is slot (40 + 29) % 30 = 9, i.e. offset 19 from origin 50.
  set_slice_origin( 50 );
  if ( rb.get_value( 19 ) != 2.0 || nest::kernel().event_delivery_manager.get_modulo( 19 ) != 9 )
  {
    return fail( "ring", "slot arithmetic differs from (origin + d) mod slots" );
  }
  nest::MultiChannelInputBuffer< 3 > mc;
  mc.add_value( 4, 0, 1.0 );
  mc.add_value( 4, 2, -3.0 );
  auto& v = mc.get_values_all_channels( 4 );
  if ( v[ 0 ] != 1.0 || v[ 1 ] != 0.0 || v[ 2 ] != -3.0 )
  {
    return fail( "ring", "MultiChannelInputBuffer channels" );
  }
  mc.reset_values_all_channels( 4 );
  if ( mc.get_values_all_channels( 4 )[ 2 ] != 0.0 )
  {
    return fail( "ring", "reset_values_all_channels" );
  }
  return 0;
}

/* Alpha PSC and PSP: I(t) = w e/tau_s t exp(-t/tau_s), V from the closed-form convolution. */
int
check_alpha_psp()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double tau_m = 10.0, tau_s = 2.0, C = 250.0, w = 100.0, E_L = -70.0;
  const long t0 = 5;
  nest::iaf_psc_alpha n;
  nest::Dictionary d;
  d[ nest::names::tau_m ] = tau_m;
  d[ nest::names::tau_syn_ex ] = tau_s;
  d[ nest::names::C_m ] = C;
  prepare( n, d );
  const auto rows = run_recorded( n, 400,
    [ & ]( long origin )
    {
      if ( origin == 0 )
      {
        deliver_spike( n, t0, w );
      }
    } );
  // Columns: stamp, I_syn_ex, I_syn_in, V_m.
  const double a = 1 / tau_s - 1 / tau_m;
  double peak_I = 0, peak_t = 0;
  for ( const auto& r : rows )
  {
    const double t = ( r[ 0 ] - t0 - 1 ) * H;
    const double I = t <= 0 ? 0.0 : w * M_E / tau_s * t * std::exp( -t / tau_s );
    const double V = t <= 0
      ? 0.0
      : w * M_E / ( tau_s * C ) * std::exp( -t / tau_m ) * ( 1 - std::exp( -a * t ) * ( 1 + a * t ) ) / ( a * a );
    if ( !close( r[ 1 ], I, 1e-12, 1e-12 ) || !close( r[ 3 ] - E_L, V, 1e-10, 1e-13 ) || r[ 2 ] != 0.0 )
    {
      return fail( "alpha_psp", fmt( "t=%g: I=%.17g V=%.17g", t, r[ 1 ], r[ 3 ] - E_L ) );
    }
    if ( r[ 1 ] > peak_I )
    {
      peak_I = r[ 1 ];
      peak_t = t;
    }
  }
  // NEST's normalisation: a PSC of weight w peaks at w pA after tau_syn.
  if ( std::fabs( peak_t - tau_s ) > 1e-9 || !close( peak_I, w, 1e-12, 0 ) )
  {
    return fail( "alpha_psp", fmt( "PSC peak %g pA at %g ms", peak_I, peak_t ) );
  }
  // Inhibitory weights go to the inhibitory current only.
  nest::iaf_psc_alpha m;
  prepare( m, d );
  const auto rows_in = run_recorded( m, 50,
    [ & ]( long origin )
    {
      if ( origin == 0 )
      {
        deliver_spike( m, t0, -w );
      }
    } );
  if ( rows_in.back()[ 1 ] != 0.0 || !( rows_in.back()[ 2 ] < 0 ) || !( rows_in.back()[ 3 ] < E_L ) )
  {
    return fail( "alpha_psp", "inhibitory spike did not act on I_syn_in only" );
  }
  return 0;
}

/* Exponential PSC: I(t) = w exp(-t/tau_s), V(t) = w/C (exp(-t/tau_m) - exp(-t/tau_s)) / (1/tau_s - 1/tau_m). */
int
check_exp_psp()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double tau_m = 10.0, tau_s = 3.0, C = 200.0, w = 80.0, E_L = -65.0;
  const long t0 = 12;
  nest::iaf_psc_exp n;
  nest::Dictionary d;
  d[ nest::names::tau_m ] = tau_m;
  d[ nest::names::tau_syn_ex ] = tau_s;
  d[ nest::names::C_m ] = C;
  d[ nest::names::E_L ] = E_L;
  d[ nest::names::V_m ] = E_L;  // V_m keeps its absolute value when only E_L changes
  prepare( n, d );
  const auto rows = run_recorded( n, 300,
    [ & ]( long origin )
    {
      if ( origin == 10 )
      {
        deliver_spike( n, t0, w );
      }
    } );
  for ( const auto& r : rows )
  {
    const double t = ( r[ 0 ] - t0 - 1 ) * H;
    const double I = t < 0 ? 0.0 : w * std::exp( -t / tau_s );
    const double V =
      t <= 0 ? 0.0 : w / C * ( std::exp( -t / tau_m ) - std::exp( -t / tau_s ) ) / ( 1 / tau_s - 1 / tau_m );
    if ( !close( r[ 1 ], I, 1e-12, 1e-12 ) || !close( r[ 3 ] - E_L, V, 1e-10, 1e-13 ) )
    {
      return fail( "exp_psp", fmt( "t=%g: I=%.17g V=%.17g", t, r[ 1 ], r[ 3 ] - E_L ) );
    }
  }
  // tau_syn == tau_m takes the singular limit: V(t) = w/C t exp(-t/tau).
  nest::iaf_psc_exp s;
  nest::Dictionary ds;
  ds[ nest::names::tau_syn_ex ] = 10.0;
  ds[ nest::names::E_L ] = 0.0;
  ds[ nest::names::V_reset ] = -1.0;
  ds[ nest::names::V_th ] = 100.0;
  ds[ nest::names::V_m ] = 0.0;
  prepare( s, ds );
  const auto rs = run_recorded( s, 200,
    [ & ]( long origin )
    {
      if ( origin == 0 )
      {
        deliver_spike( s, 0, w );
      }
    } );
  for ( const auto& r : rs )
  {
    const double t = ( r[ 0 ] - 1 ) * H;
    const double V = w / 250.0 * t * std::exp( -t / 10.0 );
    if ( !close( r[ 3 ], V, 1e-9, 1e-13 ) )
    {
      return fail( "exp_psp", fmt( "singular limit t=%g: V=%.17g want %.17g", t, r[ 3 ], V ) );
    }
  }
  return 0;
}

/* Delta synapses: a jump of w mV, then exp(-t/tau_m) decay; refractory input dropped or kept. */
int
check_delta()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double tau_m = 8.0, w = 1.5;
  nest::iaf_psc_delta n;
  nest::Dictionary d;
  d[ nest::names::tau_m ] = tau_m;
  d[ nest::names::E_L ] = 0.0;
  d[ nest::names::V_reset ] = 0.0;
  d[ nest::names::V_th ] = 10.0;
  d[ nest::names::V_m ] = 0.0;
  prepare( n, d );
  const auto rows = run_recorded( n, 100,
    [ & ]( long origin )
    {
      if ( origin == 0 )
      {
        deliver_spike( n, 3, w );
      }
    } );
  for ( const auto& r : rows )
  {
    const double t = ( r[ 0 ] - 4 ) * H;
    const double V = t < 0 ? 0.0 : w * std::exp( -t / tau_m );
    if ( !close( r[ 1 ], V, 1e-13, 1e-15 ) )
    {
      return fail( "delta", fmt( "t=%g: V=%.17g want %.17g", t, r[ 1 ], V ) );
    }
  }
  // A spike that crosses threshold, then input during the 2 ms refractory period.
  for ( int keep = 0; keep < 2; ++keep )
  {
    nest::iaf_psc_delta m;
    nest::Dictionary dm = d;
    dm[ nest::names::refractory_input ] = keep == 1;
    prepare( m, dm );
    spike_steps();
    const auto rr = run_recorded( m, 60,
      [ & ]( long origin )
      {
        if ( origin == 0 )
        {
          deliver_spike( m, 2, 12.0 );
          deliver_spike( m, 10, 2.0 );
        }
      } );
    const auto sp = spike_steps();
    if ( sp.size() != 1 || sp[ 0 ] != 3 )
    {
      return fail( "delta", "suprathreshold input must spike at stamp 3" );
    }
    // Refractory for 20 steps (stamps 4..23, updates 3..22); V is released in update 23.
    const double after = rr[ 23 ][ 1 ];
    const double want = keep ? 2.0 * std::exp( -( 23 - 10 ) * H / tau_m ) : 0.0;
    if ( !close( after, want, 1e-12, 1e-15 ) || rr[ 22 ][ 1 ] != 0.0 )
    {
      return fail( "delta", fmt( "refractory input keep=%g: V=%.17g want %.17g", keep, after, want ) );
    }
  }
  return 0;
}

/* DC input: V(t) = I R (1 - exp(-t/tau_m)); spikes at the first crossing, then every t_ref + crossing time. */
template< class M >
int
check_dc( const char* name )
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double tau_m = 10.0, C = 250.0, I = 500.0, theta = 15.0, t_ref = 2.0;
  M n;
  nest::Dictionary d;
  d[ nest::names::tau_m ] = tau_m;
  d[ nest::names::C_m ] = C;
  d[ nest::names::I_e ] = I;
  d[ nest::names::E_L ] = 0.0;
  d[ nest::names::V_reset ] = 0.0;
  d[ nest::names::V_th ] = theta;
  d[ nest::names::t_ref ] = t_ref;
  d[ nest::names::V_m ] = 0.0;
  prepare( n, d );
  spike_steps();
  const auto rows = run_recorded( n, 1000, []( long ) {} );
  const auto sp = spike_steps();
  // First crossing: smallest k with V(k h) >= theta.
  const double R = tau_m / C;
  long k = 1;
  while ( I * R * ( 1 - std::exp( -k * H / tau_m ) ) < theta )
  {
    ++k;
  }
  const long refr = 20;
  if ( sp.size() < 3 || sp[ 0 ] != k )
  {
    return fail( name, fmt( "first DC spike at stamp %g, expected %g", sp.empty() ? -1 : sp[ 0 ], k ) );
  }
  for ( size_t j = 1; j < sp.size(); ++j )
  {
    if ( sp[ j ] - sp[ j - 1 ] != k + refr )
    {
      return fail( name, fmt( "inter-spike interval %g steps, expected %g", sp[ j ] - sp[ j - 1 ], k + refr ) );
    }
  }
  const size_t vcol = rows[ 0 ].size() - 1;  // V_m sorts last among every model's recordables here
  for ( long s = 1; s < k; ++s )
  {
    const double V = I * R * ( 1 - std::exp( -s * H / tau_m ) );
    if ( !close( rows[ s - 1 ][ vcol ], V, 1e-12, 1e-14 ) )
    {
      return fail( name, fmt( "DC charging at stamp %g: V=%.17g want %.17g", s, rows[ s - 1 ][ vcol ], V ) );
    }
  }
  return 0;
}

/* izhikevich against an independent transcription of the published Euler schemes. */
int
check_izhikevich()
{
  for ( int consistent = 1; consistent >= 0; --consistent )
  {
    const double h = consistent ? 0.1 : 1.0;
    setup_kernel( h, MIN_DELAY, MAX_DELAY );
    nest::izhikevich n;
    nest::Dictionary d;
    d[ nest::names::consistent_integration ] = consistent == 1;
    d[ nest::names::I_e ] = 10.0;
    prepare( n, d );
    spike_steps();
    const long steps = consistent ? 3000 : 300;
    const auto rows = run_recorded( n, steps,
      [ & ]( long origin )
      {
        if ( origin == 20 )
        {
          deliver_spike( n, 25, 3.0 );
        }
      } );
    const auto sp = spike_steps();
    double v = -65.0, u = 0.2 * -65.0;
    const double a = 0.02, b = 0.2, c = -65.0, dd = 8.0;
    std::vector< long > want_sp;
    for ( long s = 0; s < steps; ++s )
    {
      const double in = s == 25 ? 3.0 : 0.0;
      if ( consistent )
      {
        const double v0 = v, u0 = u;
        v = v0 + ( h * ( 0.04 * v0 * v0 + 5.0 * v0 + 140.0 - u0 + 0.0 + 10.0 ) + in );
        u = u0 + h * a * ( b * v0 - u0 );
      }
      else
      {
        v = v + h * 0.5 * ( 0.04 * v * v + 5.0 * v + 140.0 - u + 0.0 + 10.0 + in );
        v = v + h * 0.5 * ( 0.04 * v * v + 5.0 * v + 140.0 - u + 0.0 + 10.0 + in );
        u = u + h * a * ( b * v - u );
      }
      if ( v >= 30.0 )
      {
        v = c;
        u = u + dd;
        want_sp.push_back( s + 1 );
      }
      // Columns: stamp, U_m, V_m.
      if ( rows[ s ][ 1 ] != u || rows[ s ][ 2 ] != v )
      {
        return fail( "izhikevich", fmt( "step %g: v=%.17g want %.17g", s, rows[ s ][ 2 ], v ) );
      }
    }
    if ( sp != want_sp || sp.size() < 3 )
    {
      return fail( "izhikevich", fmt( "spike train differs (%g spikes, expected %g)", sp.size(), want_sp.size() ) );
    }
  }
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  return 0;
}

/* Each receptor port k filters with its own tau_syn[k-1]; port 0 and ports > K are rejected. */
int
check_multisynapse()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const std::vector< double > taus = { 0.5, 2.0, 7.0 };
  const double tau_m = 10.0, C = 250.0, w = 50.0;
  for ( size_t k = 0; k < taus.size(); ++k )
  {
    nest::iaf_psc_exp_multisynapse n;
    nest::Dictionary d;
    d[ nest::names::tau_syn ] = taus;
    d[ nest::names::E_L ] = 0.0;
    d[ nest::names::V_reset ] = -1.0;
    d[ nest::names::V_th ] = 15.0;
    d[ nest::names::V_m ] = 0.0;
    prepare( n, d );
    nest::Dictionary st;
    n.get_status( st );
    if ( st.get< long >( nest::names::n_synapses ) != 3 )
    {
      return fail( "multisynapse", "n_synapses is not the length of tau_syn" );
    }
    const auto rows = run_recorded( n, 200,
      [ & ]( long origin )
      {
        if ( origin == 0 )
        {
          deliver_spike( n, 0, w, static_cast< long >( k + 1 ) );
        }
      } );
    const double tau_s = taus[ k ];
    for ( const auto& r : rows )
    {
      const double t = ( r[ 0 ] - 1 ) * H;
      const double I = w * std::exp( -t / tau_s );
      const double V =
        t <= 0 ? 0.0 : w / C * ( std::exp( -t / tau_m ) - std::exp( -t / tau_s ) ) / ( 1 / tau_s - 1 / tau_m );
      // Columns: stamp, I_syn, V_m.
      if ( !close( r[ 1 ], I, 1e-12, 1e-12 ) || !close( r[ 2 ], V, 1e-10, 1e-13 ) )
      {
        return fail( "multisynapse", fmt( "receptor %g t=%g: V=%.17g", k + 1, t, r[ 2 ] ) );
      }
    }
    nest::SpikeEvent e;
    bool rejected0 = false, rejected4 = false;
    try
    {
      n.handles_test_event( e, 0 );
    }
    catch ( const nest::KernelException& )
    {
      rejected0 = true;
    }
    try
    {
      n.handles_test_event( e, 4 );
    }
    catch ( const nest::KernelException& )
    {
      rejected4 = true;
    }
    if ( !rejected0 || !rejected4 || n.handles_test_event( e, 3 ) != 3 )
    {
      return fail( "multisynapse", "receptor port range is not [1, n_synapses]" );
    }
  }
  return 0;
}

/* get_status/set_status: potentials relative to E_L, rejected values leave the node unchanged. */
int
check_status()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  nest::iaf_psc_alpha n;
  nest::Dictionary d0;
  n.get_status( d0 );
  if ( d0.get< double >( nest::names::V_m ) != -70.0 || d0.get< double >( nest::names::V_th ) != -55.0
    || d0.get< double >( nest::names::tau_syn_ex ) != 2.0 || !std::isinf( d0.get< double >( nest::names::V_min ) ) )
  {
    return fail( "status", "iaf_psc_alpha defaults" );
  }
  nest::Dictionary d;
  d[ nest::names::E_L ] = -60.0;
  n.set_status( d );
  nest::Dictionary d1;
  n.get_status( d1 );
  // Potentials are stored relative to E_L, but changing only E_L keeps their absolute values.
  if ( d1.get< double >( nest::names::V_m ) != -70.0 || d1.get< double >( nest::names::V_th ) != -55.0
    || d1.get< double >( nest::names::V_reset ) != -70.0 || d1.get< double >( nest::names::E_L ) != -60.0 )
  {
    return fail( "status", "E_L change moved V_m, V_th or V_reset" );
  }
  nest::Dictionary bad;
  bad[ nest::names::C_m ] = -1.0;
  bad[ nest::names::V_m ] = 0.0;
  try
  {
    n.set_status( bad );
    return fail( "status", "C_m < 0 accepted" );
  }
  catch ( const nest::BadProperty& )
  {
  }
  nest::Dictionary d2;
  n.get_status( d2 );
  if ( d2.get< double >( nest::names::C_m ) != 250.0 || d2.get< double >( nest::names::V_m ) != -70.0 )
  {
    return fail( "status", "rejected set_status changed the node" );
  }
  nest::Dictionary ints;
  ints[ nest::names::t_ref ] = 3;  // an int entry must read as a double
  n.set_status( ints );
  nest::Dictionary d3;
  n.get_status( d3 );
  if ( d3.get< double >( nest::names::t_ref ) != 3.0 )
  {
    return fail( "status", "integer entry not converted" );
  }
  return 0;
}

/* poisson_generator: mean multiplicity rate*h per step, and only inside (start, stop]. */
int
check_poisson()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  nest::reseed_vp_specific_rng_( 7 );
  nest::poisson_generator g;
  nest::iaf_psc_delta target;
  nest::Dictionary d;
  d[ nest::names::rate ] = 5000.0;  // 0.5 spikes per 0.1 ms step
  d[ nest::names::start ] = 100.0;
  d[ nest::names::stop ] = 1100.0;
  g.set_status( d );
  g.init();
  static_cast< nest::Node& >( g ).pre_run_hook();
  nest::Dictionary dt;
  dt[ nest::names::V_th ] = 1e9;
  dt[ nest::names::tau_m ] = 1e9;  // nearly no leak: V sums the input
  prepare( target, dt );
  spike_steps();
  const long steps = 12000;
  for ( long origin = 0; origin < steps; origin += MIN_DELAY )
  {
    set_slice_origin( origin );
    for ( long lag = 0; lag < MIN_DELAY; ++lag )
    {
      update_lag( g, lag );
    }
  }
  const auto events = nest::kernel().event_delivery_manager.emitted_spikes_;
  nest::kernel().event_delivery_manager.emitted_spikes_.clear();
  // start 100 ms, stop 1100 ms: active in update steps 1001..11000 (start < step <= stop),
  // and send() stamps a spike of update step s with s + 1.
  if ( events.size() != 10000 || events.front().step != 1002 || events.back().step != 11001 )
  {
    return fail(
      "poisson", fmt( "%g events, first %g, last %g", events.size(), events.front().step, events.back().step ) );
  }
  for ( size_t j = 0; j < events.size(); ++j )
  {
    nest::DSSpikeEvent e;
    e.set_receiver( target );
    e.set_weight( 1.0 );
    e.set_delay_steps( 1 );
    e.set_stamp( nest::Time( nest::Time::step( 0 ) ) );  // due in update step 0
    set_slice_origin( 0 );
    static_cast< nest::Node& >( g ).event_hook( e );
  }
  set_slice_origin( 0 );
  update_lag( target, 0 );
  nest::Dictionary st;
  target.get_status( st );
  const double sum = st.get< double >( nest::names::V_m ) + 70.0;
  // Mean 0.5 per step over 10000 steps: 5000 +- 71 (sd); allow 5 sd.
  if ( std::fabs( sum - 5000.0 ) > 5 * std::sqrt( 5000.0 ) )
  {
    return fail( "poisson", fmt( "total multiplicity %g, expected 5000 +- 354", sum ) );
  }
  return 0;
}

#ifdef NESTCL_WITH_ODE_MODELS
/*
 * The GSL-integrated models (iaf_cond_alpha, aeif_cond_exp, hh_psc_alpha).
 * Their adaptive Runge-Kutta integration has no closed form to compare bit for
 * bit, so the checks compare the linear parts (conductance and current
 * kernels, subthreshold DC charging) with their closed forms to the
 * integrator's tolerance and the spiking loosely with NEST's documented
 * behaviour; the native models were compared with NEST 3.10 itself by hand
 * (identical V_m trajectories).
 */

/* Column of a recordable in run_recorded()'s rows (they follow the sorted names). */
size_t
column( const nest::Node& n, const std::string& name )
{
  nest::Dictionary st;
  n.get_status( st );
  const auto rec = st.get< std::vector< std::string > >( nest::names::recordables );
  for ( size_t k = 0; k < rec.size(); ++k )
  {
    if ( rec[ k ] == name )
    {
      return k + 1;
    }
  }
  return 0;
}

bool
rejected( nest::Node& n, const nest::Dictionary& d )
{
  try
  {
    n.set_status( d );
  }
  catch ( const nest::BadProperty& )
  {
    return true;
  }
  return false;
}

/* Every entry of want reads back unchanged from get_status. */
std::string
differing( const nest::Node& n, const nest::Dictionary& want )
{
  nest::Dictionary st;
  n.get_status( st );
  for ( const auto& kv : want )
  {
    if ( !st.known( kv.first ) || st.get< double >( kv.first ) != want.get< double >( kv.first ) )
    {
      return kv.first;
    }
  }
  return "";
}

/* Defaults, set/get round trips, rejected values (node unchanged), recordables, receptors. */
int
check_ode_status()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  using namespace nest;
  {
    iaf_cond_alpha n;
    Dictionary def;
    def[ names::V_m ] = -70.0;
    def[ names::E_L ] = -70.0;
    def[ names::V_th ] = -55.0;
    def[ names::V_reset ] = -60.0;
    def[ names::g_L ] = 16.6667;
    def[ names::C_m ] = 250.0;
    def[ names::E_ex ] = 0.0;
    def[ names::E_in ] = -85.0;
    def[ names::tau_syn_ex ] = 0.2;
    def[ names::tau_syn_in ] = 2.0;
    def[ names::t_ref ] = 2.0;
    def[ names::I_e ] = 0.0;
    def[ names::g_ex ] = 0.0;
    def[ names::dg_in ] = 0.0;
    if ( !differing( n, def ).empty() )
    {
      return fail( "ode_status", "iaf_cond_alpha default " + differing( n, def ) );
    }
    Dictionary d;
    d[ names::C_m ] = 200.0;
    d[ names::g_L ] = 20.0;
    d[ names::tau_syn_ex ] = 0.5;
    d[ names::E_in ] = -80.0;
    d[ names::V_m ] = -65.0;
    d[ names::g_ex ] = 1.5;
    d[ names::dg_in ] = 0.25;
    d[ names::t_ref ] = 3;  // an int entry reads as a double
    n.set_status( d );
    if ( !differing( n, d ).empty() )
    {
      return fail( "ode_status", "iaf_cond_alpha round trip of " + differing( n, d ) );
    }
    Dictionary b1, b2, b3, b4;
    b1[ names::C_m ] = 0.0;
    b1[ names::V_m ] = -50.0;
    b2[ names::V_reset ] = -50.0;  // not below V_th
    b3[ names::tau_syn_in ] = 0.0;
    b4[ names::t_ref ] = -0.1;
    if ( !rejected( n, b1 ) || !rejected( n, b2 ) || !rejected( n, b3 ) || !rejected( n, b4 )
      || !differing( n, d ).empty() )
    {
      return fail( "ode_status", "iaf_cond_alpha accepted a bad value or changed on a rejected one" );
    }
    nest::Dictionary st;
    n.get_status( st );
    if ( st.get< std::vector< std::string > >( names::recordables )
      != std::vector< std::string > { "V_m", "g_ex", "g_in", "t_ref_remaining" } )
    {
      return fail( "ode_status", "iaf_cond_alpha recordables" );
    }
  }
  {
    aeif_cond_exp n;
    Dictionary def;
    def[ names::V_m ] = -70.6;
    def[ names::E_L ] = -70.6;
    def[ names::V_th ] = -50.4;
    def[ names::V_peak ] = 0.0;
    def[ names::V_reset ] = -60.0;
    def[ names::Delta_T ] = 2.0;
    def[ names::tau_w ] = 144.0;
    def[ names::a ] = 4.0;
    def[ names::b ] = 80.5;
    def[ names::C_m ] = 281.0;
    def[ names::g_L ] = 30.0;
    def[ names::t_ref ] = 0.0;
    def[ names::gsl_error_tol ] = 1e-6;
    def[ names::w ] = 0.0;
    if ( !differing( n, def ).empty() )
    {
      return fail( "ode_status", "aeif_cond_exp default " + differing( n, def ) );
    }
    Dictionary d;
    d[ names::a ] = 2.0;
    d[ names::b ] = 60.0;
    d[ names::tau_w ] = 100.0;
    d[ names::gsl_error_tol ] = 1e-5;
    d[ names::w ] = 5.0;
    d[ names::g_in ] = 0.5;
    d[ names::V_m ] = -68.0;
    n.set_status( d );
    if ( !differing( n, d ).empty() )
    {
      return fail( "ode_status", "aeif_cond_exp round trip of " + differing( n, d ) );
    }
    Dictionary b1, b2, b3, b4, b5, b6;
    b1[ names::C_m ] = -1.0;
    b1[ names::w ] = 7.0;
    b2[ names::V_peak ] = -55.0;  // below V_th
    b3[ names::Delta_T ] = -1.0;
    b4[ names::gsl_error_tol ] = 0.0;
    b5[ names::g_ex ] = -1.0;
    b6[ names::Delta_T ] = 1e-3;  // exp((V_peak - V_th) / Delta_T) would overflow
    if ( !rejected( n, b1 ) || !rejected( n, b2 ) || !rejected( n, b3 ) || !rejected( n, b4 ) || !rejected( n, b5 )
      || !rejected( n, b6 ) || !differing( n, d ).empty() )
    {
      return fail( "ode_status", "aeif_cond_exp accepted a bad value or changed on a rejected one" );
    }
  }
  {
    hh_psc_alpha n;
    // Gates start at their steady state for V = -65 mV.
    const double V = -65.0;
    const double am = 0.1 * ( V + 40. ) / ( 1. - std::exp( -( V + 40. ) / 10. ) ),
                 bm = 4. * std::exp( -( V + 65. ) / 18. );
    const double ah = 0.07 * std::exp( -( V + 65. ) / 20. ), bh = 1. / ( 1. + std::exp( -( V + 35. ) / 10. ) );
    const double an = 0.01 * ( V + 55. ) / ( 1. - std::exp( -( V + 55. ) / 10. ) ),
                 bn = 0.125 * std::exp( -( V + 65. ) / 80. );
    Dictionary st;
    n.get_status( st );
    if ( st.get< double >( names::V_m ) != -65.0
      || !close( st.get< double >( names::Act_m ), am / ( am + bm ), 1e-15, 0 )
      || !close( st.get< double >( names::Inact_h ), ah / ( ah + bh ), 1e-15, 0 )
      || !close( st.get< double >( names::Act_n ), an / ( an + bn ), 1e-15, 0 )
      || st.get< double >( names::g_Na ) != 12000.0 || st.get< double >( names::E_L ) != -54.402
      || st.get< double >( names::C_m ) != 100.0 )
    {
      return fail( "ode_status", "hh_psc_alpha defaults" );
    }
    Dictionary d;
    d[ names::g_Na ] = 10000.0;
    d[ names::E_K ] = -80.0;
    d[ names::tau_syn_in ] = 3.0;
    d[ names::Act_n ] = 0.4;
    d[ names::V_m ] = -60.0;
    n.set_status( d );
    if ( !differing( n, d ).empty() )
    {
      return fail( "ode_status", "hh_psc_alpha round trip of " + differing( n, d ) );
    }
    Dictionary b1, b2, b3, b4;
    b1[ names::C_m ] = 0.0;
    b1[ names::V_m ] = -50.0;
    b2[ names::Inact_h ] = -0.1;
    b3[ names::g_K ] = -1.0;
    b4[ names::tau_syn_ex ] = 0.0;
    if ( !rejected( n, b1 ) || !rejected( n, b2 ) || !rejected( n, b3 ) || !rejected( n, b4 )
      || !differing( n, d ).empty() )
    {
      return fail( "ode_status", "hh_psc_alpha accepted a bad value or changed on a rejected one" );
    }
    // Connection set-up: a spike source asks its target; receptor 0 only.
    iaf_cond_alpha target;
    SpikeEvent e;
    bool rejected1 = false;
    try
    {
      target.handles_test_event( e, 1 );
    }
    catch ( const UnknownReceptorType& )
    {
      rejected1 = true;
    }
    if ( static_cast< Node& >( n ).send_test_event( target, 0, 0, false ) != 0 || !rejected1 )
    {
      return fail( "ode_status", "send_test_event / handles_test_event receptor check" );
    }
  }
  return 0;
}

/* Alpha conductance g(t) = w e / tau t exp(-t / tau) of a spike arriving at step t0 (t from the end of that step). */
double
alpha_kernel( double w, double tau, double stamp, long t0 )
{
  const double t = ( stamp - t0 - 1 ) * H;
  return t <= 0 ? 0.0 : w * M_E / tau * t * std::exp( -t / tau );
}

int
check_ode_iaf_cond_alpha()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double E_L = -70.0, g_L = 16.6667, C_m = 250.0;
  // Subthreshold DC: V(t) = E_L + I/g_L (1 - exp(-t g_L / C_m)).
  {
    nest::iaf_cond_alpha n;
    nest::Dictionary d;
    d[ nest::names::I_e ] = 200.0;  // V_inf = -58 mV < V_th
    prepare( n, d );
    spike_steps();
    const auto rows = run_recorded( n, 2000, []( long ) {} );
    const size_t cv = column( n, nest::names::V_m );
    for ( const auto& r : rows )
    {
      const double V = E_L + 200.0 / g_L * ( 1 - std::exp( -r[ 0 ] * H * g_L / C_m ) );
      if ( !close( r[ cv ], V, 1e-9, 0 ) )
      {
        return fail( "ode_iaf_cond_alpha", fmt( "DC charging t=%g: V=%.17g want %.17g", r[ 0 ] * H, r[ cv ], V ) );
      }
    }
    if ( !spike_steps().empty() )
    {
      return fail( "ode_iaf_cond_alpha", "spiked below threshold" );
    }
  }
  // Conductance kernels: a unit-normalised alpha function per spike, peak w nS after tau_syn.
  {
    nest::iaf_cond_alpha n, m;
    nest::Dictionary d;
    d[ nest::names::tau_syn_ex ] = 0.5;
    prepare( n, d );
    prepare( m, d );
    const long t0 = 13, t1 = 57;
    const double we = 3.0, wi = -2.0;
    const auto rows = run_recorded( n, 400,
      [ & ]( long origin )
      {
        if ( origin == 10 )
        {
          deliver_spike( n, t0, we );
        }
      } );
    const auto rows_in = run_recorded( m, 400,
      [ & ]( long origin )
      {
        if ( origin == 50 )
        {
          deliver_spike( m, t1, wi );
        }
      } );
    const size_t ce = column( n, nest::names::g_ex ), ci = column( n, nest::names::g_in ),
                 cv = column( n, nest::names::V_m );
    double peak = 0, peak_t = 0;
    for ( size_t k = 0; k < rows.size(); ++k )
    {
      const auto& r = rows[ k ];
      const double ge = alpha_kernel( we, 0.5, r[ 0 ], t0 ), gi = alpha_kernel( -wi, 2.0, r[ 0 ], t1 );
      // GSL's absolute error bound is 1e-3 per step; the linear kernels come out far closer.
      if ( !close( r[ ce ], ge, 0, 1e-5 ) || r[ ci ] != 0.0 || !close( rows_in[ k ][ ci ], gi, 0, 1e-5 )
        || rows_in[ k ][ ce ] != 0.0 )
      {
        return fail( "ode_iaf_cond_alpha", fmt( "stamp %g: g_ex=%.17g want %.17g", r[ 0 ], r[ ce ], ge ) );
      }
      if ( r[ ce ] > peak )
      {
        peak = r[ ce ];
        peak_t = ( r[ 0 ] - t0 - 1 ) * H;
      }
    }
    // The excitatory conductance depolarises, the inhibitory one (E_in = -85 mV) hyperpolarises.
    if ( !close( peak, we, 1e-5, 0 ) || std::fabs( peak_t - 0.5 ) > 1e-9 || !( rows[ 30 ][ cv ] > E_L + 0.5 )
      || !( rows_in[ 100 ][ cv ] < E_L - 0.2 ) )
    {
      return fail( "ode_iaf_cond_alpha",
        fmt( "g_ex peak %g nS at %g ms; V %g", peak, peak_t, rows[ 30 ][ cv ] ) + fmt( ", %g", rows_in[ 100 ][ cv ] ) );
    }
  }
  // I_e = 500 pA: regular firing (NEST: 15 spikes in the first 100 ms), V held at V_reset for t_ref.
  {
    nest::iaf_cond_alpha n;
    nest::Dictionary d;
    d[ nest::names::I_e ] = 500.0;
    prepare( n, d );
    spike_steps();
    const auto rows = run_recorded( n, 1000, []( long ) {} );
    const auto sp = spike_steps();
    const size_t cv = column( n, nest::names::V_m ), cr = column( n, nest::names::t_ref_remaining );
    if ( sp.size() < 10 || sp.size() > 20 )
    {
      return fail( "ode_iaf_cond_alpha", fmt( "%g spikes in 100 ms at I_e = 500 pA", sp.size() ) );
    }
    for ( size_t j = 2; j < sp.size(); ++j )
    {
      if ( std::labs( ( sp[ j ] - sp[ j - 1 ] ) - ( sp[ 1 ] - sp[ 0 ] ) ) > 1 )
      {
        return fail( "ode_iaf_cond_alpha", "irregular firing under DC" );
      }
    }
    for ( const auto& r : rows )
    {
      if ( r[ cv ] >= -55.0 && r[ cv ] != -60.0 )
      {
        return fail( "ode_iaf_cond_alpha", fmt( "V_m = %g at or above threshold in a record", r[ cv ] ) );
      }
    }
    // Spike at stamp s: V = V_reset from that record through the 20 refractory steps.
    for ( long k = 0; k <= 20; ++k )
    {
      const auto& r = rows[ sp[ 0 ] - 1 + k ];
      if ( r[ cv ] != -60.0 || !close( r[ cr ], ( 20 - k ) * H, 1e-12, 1e-15 ) )
      {
        return fail(
          "ode_iaf_cond_alpha", fmt( "refractory record %g: V=%g t_ref_remaining=%g", k, r[ cv ], r[ cr ] ) );
      }
    }
    // The same drive as CurrentEvents (weight 2 x 250 pA), each acting in the
    // step after its arrival: the DC response one step later.
    nest::iaf_cond_alpha m;
    prepare( m, nest::Dictionary() );
    const auto rows_c = run_recorded( m, 1000,
      [ & ]( long origin )
      {
        for ( long s = origin; s < origin + MIN_DELAY; ++s )
        {
          deliver_current( m, s, 250.0, 2.0 );
        }
      } );
    const auto sp_c = spike_steps();
    bool shifted = sp_c.size() + 1 >= sp.size() && sp_c.size() <= sp.size() && rows_c[ 0 ][ cv ] == E_L;
    for ( size_t j = 0; shifted && j < sp_c.size(); ++j )
    {
      shifted = sp_c[ j ] == sp[ j ] + 1;
    }
    for ( long k = 1; shifted && k < sp[ 0 ]; ++k )
    {
      shifted = close( rows_c[ k ][ cv ], rows[ k - 1 ][ cv ], 1e-12, 0 );
    }
    if ( !shifted )
    {
      return fail( "ode_iaf_cond_alpha",
        fmt( "current input: %g spikes, first at %g (DC: %g)", sp_c.size(), sp_c.empty() ? -1 : sp_c[ 0 ], sp[ 0 ] ) );
    }
  }
  return 0;
}

int
check_ode_aeif_cond_exp()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const double V_reset = -60.0, b = 80.5;
  // I_e = 1000 pA: adapting spike train (NEST: 6 spikes in the first 100 ms, intervals growing).
  {
    nest::aeif_cond_exp n;
    nest::Dictionary d;
    d[ nest::names::I_e ] = 1000.0;
    prepare( n, d );
    spike_steps();
    const auto rows = run_recorded( n, 3000, []( long ) {} );
    const auto sp = spike_steps();
    const size_t cv = column( n, nest::names::V_m ), cw = column( n, nest::names::w );
    if ( sp.size() < 8 || sp.size() > 40 )
    {
      return fail( "ode_aeif_cond_exp", fmt( "%g spikes in 300 ms at I_e = 1000 pA", sp.size() ) );
    }
    for ( size_t j = 2; j < sp.size(); ++j )
    {
      if ( sp[ j ] - sp[ j - 1 ] < sp[ j - 1 ] - sp[ j - 2 ] - 1 )
      {
        return fail( "ode_aeif_cond_exp", "inter-spike intervals shrink: no adaptation" );
      }
    }
    if ( !( sp.back() - sp[ sp.size() - 2 ] > sp[ 1 ] - sp[ 0 ] ) )
    {
      return fail( "ode_aeif_cond_exp", "inter-spike intervals do not grow: no adaptation" );
    }
    // At a spike w jumps by b and V is reset (and, t_ref = 0, evolves on for the rest of the step).
    for ( const long s : sp )
    {
      const auto& before = rows[ s - 2 ];
      const auto& at = rows[ s - 1 ];
      if ( !close( at[ cw ] - before[ cw ], b, 0, 2.0 ) || std::fabs( at[ cv ] - V_reset ) > 5.0 )
      {
        return fail(
          "ode_aeif_cond_exp", fmt( "spike at %g: w jumped %g, V=%g", s, at[ cw ] - before[ cw ], at[ cv ] ) );
      }
    }
    for ( const auto& r : rows )
    {
      if ( !( r[ cv ] < 0.0 ) )
      {
        return fail( "ode_aeif_cond_exp", fmt( "V_m = %g at or above V_peak in a record", r[ cv ] ) );
      }
    }
  }
  // t_ref = 2 ms: V is clamped to V_reset from the spike through 20 more steps.
  {
    nest::aeif_cond_exp n;
    nest::Dictionary d;
    d[ nest::names::I_e ] = 1000.0;
    d[ nest::names::t_ref ] = 2.0;
    prepare( n, d );
    spike_steps();
    const auto rows = run_recorded( n, 1000, []( long ) {} );
    const auto sp = spike_steps();
    const size_t cv = column( n, nest::names::V_m );
    if ( sp.empty() )
    {
      return fail( "ode_aeif_cond_exp", "no spike with t_ref = 2 ms" );
    }
    for ( long k = 0; k <= 20; ++k )
    {
      if ( rows[ sp[ 0 ] - 1 + k ][ cv ] != V_reset )
      {
        return fail( "ode_aeif_cond_exp", fmt( "refractory record %g: V=%.17g", k, rows[ sp[ 0 ] - 1 + k ][ cv ] ) );
      }
    }
    if ( rows[ sp[ 0 ] + 20 ][ cv ] == V_reset )
    {
      return fail( "ode_aeif_cond_exp", "V still clamped after t_ref" );
    }
  }
  // Exponential conductances: a spike of weight w adds w nS, decaying with tau_syn.
  {
    nest::aeif_cond_exp n;
    prepare( n, nest::Dictionary() );
    const long t0 = 5;
    const auto rows = run_recorded( n, 200,
      [ & ]( long origin )
      {
        if ( origin == 0 )
        {
          deliver_spike( n, t0, 4.0 );
          deliver_spike( n, t0, -3.0 );
        }
      } );
    const size_t ce = column( n, nest::names::g_ex ), ci = column( n, nest::names::g_in );
    for ( const auto& r : rows )
    {
      const double t = ( r[ 0 ] - t0 - 1 ) * H;
      const double ge = t < 0 ? 0.0 : 4.0 * std::exp( -t / 0.2 ), gi = t < 0 ? 0.0 : 3.0 * std::exp( -t / 2.0 );
      if ( !close( r[ ce ], ge, 1e-4, 1e-6 ) || !close( r[ ci ], gi, 1e-4, 1e-6 ) )
      {
        return fail( "ode_aeif_cond_exp", fmt( "t=%g: g_ex=%.17g want %.17g", t, r[ ce ], ge ) );
      }
    }
  }
  // A state the integration cannot follow: NEST stops with NumericalInstability.
  for ( int k = 0; k < 2; ++k )
  {
    nest::aeif_cond_exp n;
    nest::Dictionary d;
    if ( k == 0 )
    {
      d[ nest::names::I_e ] = -1e300;  // drives V far below -1000 mV within the first step
    }
    else
    {
      d[ nest::names::w ] = 1e7;
    }
    prepare( n, d );
    std::string got = "no exception";
    try
    {
      run_recorded( n, 100, []( long ) {} );
    }
    catch ( const nest::NumericalInstability& )
    {
      got = "";
    }
    catch ( const nest::GSLSolverFailure& e )
    {
      got = e.what();
    }
    if ( !got.empty() )
    {
      return fail( "ode_aeif_cond_exp", "runaway state did not raise NumericalInstability: " + got );
    }
  }
  return 0;
}

int
check_ode_hh_psc_alpha()
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  // At rest (I_e = 0) the defaults are a fixed point near -65 mV.
  {
    nest::hh_psc_alpha n;
    prepare( n, nest::Dictionary() );
    spike_steps();
    const auto rows = run_recorded( n, 1000, []( long ) {} );
    const size_t cv = column( n, nest::names::V_m );
    for ( const auto& r : rows )
    {
      if ( std::fabs( r[ cv ] + 65.0 ) > 0.01 )
      {
        return fail( "ode_hh_psc_alpha", fmt( "resting V drifted to %g mV", r[ cv ] ) );
      }
    }
    if ( !spike_steps().empty() )
    {
      return fail( "ode_hh_psc_alpha", "spiked at rest" );
    }
  }
  // Alpha PSCs: w e / tau t exp(-t / tau), peak w pA after tau_syn; the inhibitory one negative.
  {
    nest::hh_psc_alpha n;
    prepare( n, nest::Dictionary() );
    const long t0 = 8;
    const auto rows = run_recorded( n, 300,
      [ & ]( long origin )
      {
        if ( origin == 0 )
        {
          deliver_spike( n, t0, 30.0 );
          deliver_spike( n, t0, -20.0 );
        }
      } );
    const size_t ce = column( n, nest::names::I_syn_ex ), ci = column( n, nest::names::I_syn_in );
    for ( const auto& r : rows )
    {
      const double ie = alpha_kernel( 30.0, 0.2, r[ 0 ], t0 ), ii = alpha_kernel( -20.0, 2.0, r[ 0 ], t0 );
      if ( !close( r[ ce ], ie, 0, 1e-3 ) || !close( r[ ci ], ii, 0, 1e-3 ) )
      {
        return fail( "ode_hh_psc_alpha", fmt( "stamp %g: I_syn_ex=%.17g want %.17g", r[ 0 ], r[ ce ], ie ) );
      }
    }
  }
  // I_e = 1000 pA: tonic firing (NEST: 7 spikes in the first 100 ms), each spike just past an action potential's peak.
  {
    nest::hh_psc_alpha n;
    nest::Dictionary d;
    d[ nest::names::I_e ] = 1000.0;
    prepare( n, d );
    spike_steps();
    const auto rows = run_recorded( n, 1000, []( long ) {} );
    const auto sp = spike_steps();
    const size_t cv = column( n, nest::names::V_m );
    if ( sp.size() < 4 || sp.size() > 12 )
    {
      return fail( "ode_hh_psc_alpha", fmt( "%g spikes in 100 ms at I_e = 1000 pA", sp.size() ) );
    }
    for ( size_t j = 0; j < sp.size(); ++j )
    {
      const double V = rows[ sp[ j ] - 1 ][ cv ], U_old = rows[ sp[ j ] - 2 ][ cv ];
      if ( !( V >= 0.0 && U_old > V ) )
      {
        return fail( "ode_hh_psc_alpha", fmt( "spike at %g: V %g after %g", sp[ j ], V, U_old ) );
      }
      if ( j >= 3 && std::labs( ( sp[ j ] - sp[ j - 1 ] ) - ( sp[ j - 1 ] - sp[ j - 2 ] ) ) > 2 )
      {
        return fail( "ode_hh_psc_alpha", "irregular tonic firing" );
      }
    }
  }
  return 0;
}

/* CurrentEvents act in the step after their arrival: a constant drive through
 * them fires like the same I_e, one step later. */
template< class M >
int
check_ode_current( const char* name, double I )
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  M a, b;
  nest::Dictionary d;
  d[ nest::names::I_e ] = I;
  prepare( a, d );
  prepare( b, nest::Dictionary() );
  spike_steps();
  run_recorded( a, 1000, []( long ) {} );
  const auto sp = spike_steps();
  run_recorded( b, 1000,
    [ & ]( long origin )
    {
      for ( long s = origin; s < origin + MIN_DELAY; ++s )
      {
        deliver_current( b, s, I / 4, 4.0 );
      }
    } );
  const auto sp_c = spike_steps();
  bool shifted = sp.size() >= 3 && sp_c.size() + 1 >= sp.size() && sp_c.size() <= sp.size();
  for ( size_t j = 0; shifted && j < sp_c.size(); ++j )
  {
    shifted = sp_c[ j ] == sp[ j ] + 1;
  }
  if ( !shifted )
  {
    return fail( name, fmt( "%g spikes through CurrentEvents, %g with I_e", sp_c.size(), sp.size() ) );
  }
  return 0;
}

int
ode_current()
{
  return check_ode_current< nest::aeif_cond_exp >( "ode_current aeif_cond_exp", 1000.0 )
    || check_ode_current< nest::hh_psc_alpha >( "ode_current hh_psc_alpha", 1000.0 );
}

/*
 * The GSL objects' life cycle: a copy allocates its own (init_buffers_ after
 * the copy constructor), a second init_buffers_ resets them. Both must give
 * the trajectory of a fresh node bit for bit.
 */
template< class M >
int
check_ode_lifecycle( const char* name, double I_e )
{
  setup_kernel( H, MIN_DELAY, MAX_DELAY );
  const auto input = [ & ]( nest::Node& n, long origin )
  {
    if ( origin == 20 )
    {
      deliver_spike( n, 25, 2.0 );
      deliver_spike( n, 27, -1.0 );
    }
    if ( origin >= 100 && origin < 200 )
    {
      deliver_current( n, origin, 100.0 );
    }
  };
  M a;
  nest::Dictionary d;
  d[ nest::names::I_e ] = I_e;
  prepare( a, d );
  nest::Dictionary s0;
  a.get_status( s0 );
  M copy( a );
  const auto rows_a = run_recorded( a, 600, [ & ]( long o ) { input( a, o ); } );
  const auto sp_a = spike_steps();

  copy.init();
  static_cast< nest::Node& >( copy ).pre_run_hook();
  const auto rows_c = run_recorded( copy, 600, [ & ]( long o ) { input( copy, o ); } );
  const auto sp_c = spike_steps();

  // Back to the initial state (no spike in the first 10 steps: nothing refractory), buffers re-initialised.
  M r;
  prepare( r, d );
  run_recorded( r, 10, []( long ) {} );
  r.set_status( s0 );
  r.init();
  static_cast< nest::Node& >( r ).pre_run_hook();
  spike_steps();
  const auto rows_r = run_recorded( r, 600, [ & ]( long o ) { input( r, o ); } );
  const auto sp_r = spike_steps();

  if ( rows_c != rows_a || sp_c != sp_a )
  {
    return fail( name, "a copied node integrates differently from its original" );
  }
  if ( rows_r != rows_a || sp_r != sp_a )
  {
    return fail( name, "re-initialised GSL objects integrate differently from fresh ones" );
  }
  if ( sp_a.empty() )
  {
    return fail( name, "no spike in the life-cycle run" );
  }
  return 0;
}

int
ode_lifecycle()
{
  return check_ode_lifecycle< nest::iaf_cond_alpha >( "ode_lifecycle iaf_cond_alpha", 500.0 )
    || check_ode_lifecycle< nest::aeif_cond_exp >( "ode_lifecycle aeif_cond_exp", 800.0 )
    || check_ode_lifecycle< nest::hh_psc_alpha >( "ode_lifecycle hh_psc_alpha", 800.0 );
}
#endif

struct Check
{
  const char* name;
  int ( *fn )();
};

int
dc_alpha()
{
  return check_dc< nest::iaf_psc_alpha >( "dc_iaf_psc_alpha" );
}
int
dc_exp()
{
  return check_dc< nest::iaf_psc_exp >( "dc_iaf_psc_exp" );
}
int
dc_delta()
{
  return check_dc< nest::iaf_psc_delta >( "dc_iaf_psc_delta" );
}
}  // namespace

int
main( int argc, char** argv )
{
  const Check checks[] = {
    { "time", check_time },
    { "ring", check_ring_buffers },
    { "alpha_psp", check_alpha_psp },
    { "exp_psp", check_exp_psp },
    { "delta", check_delta },
    { "dc_iaf_psc_alpha", dc_alpha },
    { "dc_iaf_psc_exp", dc_exp },
    { "dc_iaf_psc_delta", dc_delta },
    { "izhikevich", check_izhikevich },
    { "multisynapse", check_multisynapse },
    { "status", check_status },
    { "poisson", check_poisson },
#ifdef NESTCL_WITH_ODE_MODELS
    { "ode_status", check_ode_status },
    { "ode_iaf_cond_alpha", check_ode_iaf_cond_alpha },
    { "ode_aeif_cond_exp", check_ode_aeif_cond_exp },
    { "ode_hh_psc_alpha", check_ode_hh_psc_alpha },
    { "ode_current", ode_current },
    { "ode_lifecycle", ode_lifecycle },
#endif
  };
  int failed = 0, ran = 0;
  for ( const Check& c : checks )
  {
    bool wanted = argc < 2;
    for ( int a = 1; a < argc; ++a )
    {
      wanted = wanted || std::strcmp( argv[ a ], c.name ) == 0;
    }
    if ( !wanted )
    {
      continue;
    }
    ++ran;
    const int rc = c.fn();
    std::printf( "%s %s\n", rc ? "FAIL" : "ok  ", c.name );
    std::fflush( stdout );
    failed += rc != 0;
  }
  if ( ran == 0 )
  {
    std::fprintf( stderr, "error: no check matches the arguments\n" );
    return 2;
  }
  return failed ? 1 : 0;
}
