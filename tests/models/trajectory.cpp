/*
 * Trajectory harness: proves a translated model equal to its original. The
 * natively compiled model (models/ against models/shim) runs NEST-style, its
 * input delivered through its own handle() functions; the translated C loop
 * (<model>_update_cpu) and the translated OpenCL kernel (on the selected
 * device, PoCL in CI) run the same population on SoA filled from the native
 * nodes through the generated glue (nestcl_glue::pack_<model>), their input
 * routed by the translated route_spike/route_current into the fixed-point
 * ring. After every step every field of every neuron is compared bit for bit
 * (memcmp of the SoA), and so are the emitted spikes and the recording hook's
 * output. It also checks the translated host helpers: pre_run against
 * pre_run_hook() (Variables_ bit for bit), set_defaults against the
 * constructors, get_status against the native status dictionary, and the glue
 * round trip (unpack then pack).
 *
 * Inputs are deterministic per (neuron, step): excitatory and inhibitory
 * spikes and a piecewise constant current, each a multiple of 2^-16, so that
 * double sums in the native ring buffers equal the exact fixed-point sums.
 * The only tolerance is the documented one for transcendental calls inside
 * update() (see Setup::tolerant_fields).
 *
 * Built once per model with -DNESTCL_MODEL=<model> and
 * -DNESTCL_GLUE_HEADER="<model>_glue.hpp".
 */
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include NESTCL_GLUE_HEADER

#include "nestcl/device.h"
#include "nestcl/block.h"
#include "nestcl/model.h"
#include "nestcl_fixed.h"
#include "nestcl_glue_table.hpp"
#include "nestcl_libm.h"
#include "nestcl_rt_source.h"
#include "shim_driver.hpp"

#define NESTCL_CAT2( a, b ) a##b
#define NESTCL_CAT( a, b ) NESTCL_CAT2( a, b )
#define NESTCL_STR2( x ) #x
#define NESTCL_STR( x ) NESTCL_STR2( x )

extern "C" const nestcl_model NESTCL_CAT( nestcl_model_, NESTCL_MODEL );

namespace
{
using Model = nest::NESTCL_MODEL;
const char* const MODEL_NAME = NESTCL_STR( NESTCL_MODEL );
const nestcl_model* const DESC = &NESTCL_CAT( nestcl_model_, NESTCL_MODEL );

const long MIN_DELAY = 10;  // lags per super step
const long MAX_DELAY = 20;
const long RING_SLOTS = MIN_DELAY + MAX_DELAY;
const long REC_INTERVAL = 3;          // records every third step: the hook's condition is tested too
const uint32_t TRAJ_RNG_SEED = 2024;  // the translated draws' seed (C loop and kernel alike)

void
pack( const Model& m, void* const* f, size_t n, size_t i )
{
  nestcl_glue::NESTCL_CAT( pack_, NESTCL_MODEL )( m, f, n, i );
}

void
unpack( Model& m, void* const* f, size_t n, size_t i )
{
  nestcl_glue::NESTCL_CAT( unpack_, NESTCL_MODEL )( m, f, n, i );
}

/* ---- deterministic input ---------------------------------------------- */

uint64_t
mix( uint64_t z )
{
  z += 0x9e3779b97f4a7c15ULL;
  z = ( z ^ ( z >> 30 ) ) * 0xbf58476d1ce4e5b9ULL;
  z = ( z ^ ( z >> 27 ) ) * 0x94d049bb133111ebULL;
  return z ^ ( z >> 31 );
}

/* Uniform in [0, 1) from (a, b, stream). */
double
u01( uint64_t a, uint64_t b, uint64_t stream )
{
  return ( mix( mix( mix( stream ) ^ a ) ^ b ) >> 11 ) * ( 1.0 / 9007199254740992.0 );
}

/* Nearest multiple of 2^-16: exact in the ring's fixed point and in double sums. */
double
q16( double x )
{
  return std::round( x * 65536.0 ) / 65536.0;
}

struct SpikeIn
{
  double weight;
  long rport;
  double offset; /* the spike's offset (SpikeEvent::get_offset), 0 unless the set-up gives one */
};

struct CurrentIn
{
  double current;
  long rport;
};

/* What one model's population looks like and what drives it. */
struct Setup
{
  double resolution_ms = 0.1;
  uint32_t K = 0;
  std::function< void( size_t, nest::Dictionary& ) > params;
  double p_ex = 0, w_ex = 0, p_in = 0, w_in = 0;  // spike probability per step and mean weight
  double I_lo = 0, I_hi = 0;                      // current level range (changes every 1000 steps)
  bool currents = true;                           // false: the model takes no CurrentEvent (parrot_neuron)
  bool logged = true;                             // false: no recordables, no multimeter (parrot_neuron)
  std::function< long( size_t, long, bool ) > rport = []( size_t, long, bool ) { return 0L; };
  /* The offset an input spike carries (a model whose handler reads get_offset()). */
  std::function< double( size_t, long, bool ) > offset = []( size_t, long, bool ) { return 0.0; };
  std::function< void( size_t, long, std::vector< CurrentIn >& ) > extra_currents;
  /*
   * Fields that may differ from the native original because update() itself
   * calls a transcendental function: the translated paths use the project's
   * portable nestcl_exp & co. (kernels_templates/nestcl_math.h, <= 0.51 ulp,
   * identical in C and OpenCL) where the original uses glibc. Bounded by
   * |a - b| <= tolerance * max(1, |a|, |b|) against the native state; spike
   * times must still be identical, and the OpenCL kernel must equal the C loop
   * bit for bit in every field.
   */
  std::vector< std::string > tolerant_fields;
  double tolerance = 0;
  /* State fields without a NEST name start random through the glue; ODE models set their state
     vector through the status dictionary instead (random gating variables are not a neuron). */
  bool random_state = true;
  /* The drive must make a tenth of the neurons spike, except where spikes are random (pp_psc_delta
     runs here at rate 0; its draws are tested in distribution elsewhere). */
  bool spikes_expected = true;
};

double
pick( size_t i, uint64_t stream, double lo, double hi )
{
  return lo + ( hi - lo ) * u01( i, 0, stream );
}

/* Shared by the iaf models: membrane, threshold and refractoriness, heterogeneous. */
void
iaf_common( size_t i, nest::Dictionary& d, bool has_lower_bound )
{
  static const double t_refs[] = { 0.0, 0.5, 1.0, 2.0, 2.04, 3.33 };  // 2.04 and 3.33 round up to whole steps
  const double E_L = pick( i, 1, -75.0, -65.0 );
  const double V_th = E_L + pick( i, 2, 10.0, 20.0 );
  d[ nest::names::tau_m ] = pick( i, 3, 5.0, 20.0 );
  d[ nest::names::C_m ] = pick( i, 4, 150.0, 350.0 );
  d[ nest::names::t_ref ] = t_refs[ i % 6 ];
  d[ nest::names::E_L ] = E_L;
  d[ nest::names::V_th ] = V_th;
  d[ nest::names::V_reset ] = E_L - pick( i, 5, 0.0, 5.0 );
  d[ nest::names::I_e ] = pick( i, 6, 0.0, 50.0 );
  d[ nest::names::V_m ] = E_L + ( V_th - E_L ) * u01( i, 0, 7 );
  if ( has_lower_bound && i % 5 == 0 )
  {
    d[ nest::names::V_min ] = E_L - 3.0;
  }
}

Setup
make_setup( const std::string& model )
{
  Setup s;
  if ( model == "iaf_psc_alpha" || model == "iaf_psc_exp" )
  {
    const bool alpha = model == "iaf_psc_alpha";
    s.params = [ alpha ]( size_t i, nest::Dictionary& d )
    {
      iaf_common( i, d, alpha );
      const double tau_m = d.get< double >( nest::names::tau_m );
      // Every 17th neuron has tau_syn_ex == tau_m, every 23rd tau_syn_in == tau_m:
      // the propagators' singular branch.
      d[ nest::names::tau_syn_ex ] = i % 17 == 0 ? tau_m : pick( i, 8, 0.5, 5.0 );
      d[ nest::names::tau_syn_in ] = i % 23 == 0 ? tau_m : pick( i, 9, 0.5, 5.0 );
    };
    s.p_ex = 0.05;
    s.w_ex = alpha ? 30.0 : 80.0;
    s.p_in = 0.03;
    s.w_in = alpha ? 50.0 : 130.0;
    s.I_lo = 250.0;
    s.I_hi = 450.0;
    if ( !alpha )
    {
      // Receptor 1 currents pass through the excitatory synapse (odd neurons).
      s.extra_currents = []( size_t i, long t, std::vector< CurrentIn >& out )
      {
        if ( i % 2 == 1 )
        {
          out.push_back( { q16( 50.0 * u01( i, t / 700, 21 ) ), 1 } );
        }
      };
    }
  }
  else if ( model == "iaf_psc_delta" )
  {
    s.params = []( size_t i, nest::Dictionary& d )
    {
      iaf_common( i, d, true );
      d[ nest::names::refractory_input ] = i % 3 == 0;
    };
    s.p_ex = 0.05;
    s.w_ex = 0.3;
    s.p_in = 0.03;
    s.w_in = 0.5;
    s.I_lo = 250.0;
    s.I_hi = 450.0;
    // update() calls std::exp for input arriving while refractory (refractory_input): glibc's on the
    // device too (nestcl_glibc_exp), so no tolerance.
  }
  else if ( model == "izhikevich" )
  {
    // 1 ms steps, so half of the population can use the publication's scheme.
    s.resolution_ms = 1.0;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      const double b = pick( i, 2, 0.2, 0.25 );
      const double v = pick( i, 7, -70.0, -60.0 );
      d[ nest::names::a ] = pick( i, 1, 0.02, 0.1 );
      d[ nest::names::b ] = b;
      d[ nest::names::c ] = pick( i, 3, -65.0, -50.0 );
      d[ nest::names::d ] = pick( i, 4, 2.0, 8.0 );
      d[ nest::names::I_e ] = pick( i, 5, 0.0, 5.0 );
      d[ nest::names::consistent_integration ] = i % 2 == 0;
      if ( i % 7 == 0 )
      {
        d[ nest::names::V_min ] = -80.0;
      }
      d[ nest::names::V_m ] = v;
      d[ nest::names::U_m ] = b * v;
    };
    s.p_ex = 0.1;
    s.w_ex = 3.0;
    s.p_in = 0.05;
    s.w_in = 3.0;
    s.I_lo = 0.0;
    s.I_hi = 10.0;
  }
  else if ( model == "iaf_psc_exp_multisynapse" )
  {
    s.K = 3;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      iaf_common( i, d, false );
      const double tau_m = d.get< double >( nest::names::tau_m );
      d[ nest::names::tau_syn ] = std::vector< double > { pick( i, 8, 0.5, 2.5 ),
        i % 13 == 0 ? tau_m : pick( i, 9, 2.0, 6.0 ), pick( i, 10, 5.0, 10.0 ) };
    };
    s.p_ex = 0.05;
    s.w_ex = 80.0;
    s.p_in = 0.03;
    s.w_in = 130.0;
    s.I_lo = 250.0;
    s.I_hi = 450.0;
    // Excitatory input on receptors 1 and 2, inhibitory on 3.
    s.rport = []( size_t i, long t, bool excitatory )
    { return excitatory ? 1L + ( u01( i, t, 22 ) < 0.5 ? 0 : 1 ) : 3L; };
  }
  else if ( model == "iaf_cond_alpha" )
  {
    // GSL's rkf45 with the y control: the device's nestcl_rkf45.h must take the same steps.
    s.random_state = false;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      static const double t_refs[] = { 0.0, 0.5, 1.0, 2.0, 2.04, 3.33 };
      const double E_L = pick( i, 1, -75.0, -65.0 );
      const double V_th = E_L + pick( i, 2, 10.0, 20.0 );
      d[ nest::names::E_L ] = E_L;
      d[ nest::names::V_th ] = V_th;
      d[ nest::names::V_reset ] = E_L - pick( i, 5, 0.0, 5.0 );
      d[ nest::names::t_ref ] = t_refs[ i % 6 ];
      d[ nest::names::C_m ] = pick( i, 4, 150.0, 350.0 );
      d[ nest::names::g_L ] = pick( i, 3, 10.0, 25.0 );
      d[ nest::names::tau_syn_ex ] = pick( i, 8, 0.2, 2.0 );
      d[ nest::names::tau_syn_in ] = pick( i, 9, 1.0, 5.0 );
      d[ nest::names::I_e ] = pick( i, 6, 0.0, 100.0 );
      d[ nest::names::V_m ] = E_L + ( V_th - E_L ) * u01( i, 0, 7 );
      d[ nest::names::g_ex ] = q16( pick( i, 10, 0.0, 5.0 ) );
      d[ nest::names::dg_in ] = q16( pick( i, 11, 0.0, 2.0 ) );
    };
    s.p_ex = 0.05;
    s.w_ex = 3.0;
    s.p_in = 0.03;
    s.w_in = 5.0;
    s.I_lo = 150.0;
    s.I_hi = 400.0;
  }
  else if ( model == "aeif_cond_exp" )
  {
    // The yp control, the exponential spike current (std::exp: glibc's, bit for bit) and
    // spikes inside the integration loop; every 7th neuron has Delta_T = 0.
    s.random_state = false;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      static const double t_refs[] = { 0.0, 0.5, 2.0 };
      d[ nest::names::C_m ] = pick( i, 1, 200.0, 300.0 );
      d[ nest::names::g_L ] = pick( i, 2, 20.0, 40.0 );
      d[ nest::names::E_L ] = pick( i, 3, -72.0, -68.0 );
      d[ nest::names::V_th ] = pick( i, 4, -52.0, -48.0 );
      d[ nest::names::Delta_T ] = i % 7 == 0 ? 0.0 : pick( i, 5, 1.5, 2.5 );
      d[ nest::names::V_reset ] = pick( i, 6, -62.0, -58.0 );
      d[ nest::names::t_ref ] = t_refs[ i % 3 ];
      d[ nest::names::a ] = pick( i, 7, 2.0, 6.0 );
      d[ nest::names::b ] = pick( i, 8, 40.0, 100.0 );
      d[ nest::names::tau_w ] = pick( i, 9, 100.0, 200.0 );
      d[ nest::names::tau_syn_ex ] = pick( i, 10, 0.2, 1.0 );
      d[ nest::names::tau_syn_in ] = pick( i, 11, 2.0, 5.0 );
      d[ nest::names::I_e ] = pick( i, 12, 0.0, 200.0 );
      if ( i % 5 == 0 )
      {
        d[ nest::names::gsl_error_tol ] = 1e-7;
      }
      d[ nest::names::V_m ] = pick( i, 13, -70.0, -55.0 );
      d[ nest::names::w ] = q16( pick( i, 14, 0.0, 50.0 ) );
    };
    s.p_ex = 0.05;
    s.w_ex = 5.0;
    s.p_in = 0.03;
    s.w_in = 8.0;
    s.I_lo = 300.0;
    s.I_hi = 700.0;
  }
  else if ( model == "aeif_cond_alpha_multisynapse" )
  {
    // A state vector of 2 + 2 K doubles (K = 3): a fast excitatory, an inhibitory (E_rev -90..-75
    // mV) and a slow depolarising receptor, every port driven with positive weights (the model
    // refuses negative ones, so no inhibitory-sign spikes). Every 11th neuron has a 0.1 ms
    // receptor and gsl_error_tol 1e-9: GSL takes ~12 internal steps per step there, and rejects
    // steps on every neuron.
    s.K = 3;
    s.random_state = false;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      static const double t_refs[] = { 0.0, 0.5, 2.0, 3.33 };
      const bool stiff = i % 11 == 0;
      d[ nest::names::C_m ] = pick( i, 1, 200.0, 300.0 );
      d[ nest::names::g_L ] = pick( i, 2, 20.0, 40.0 );
      d[ nest::names::E_L ] = pick( i, 3, -72.0, -68.0 );
      d[ nest::names::V_th ] = pick( i, 4, -52.0, -48.0 );
      d[ nest::names::Delta_T ] = i % 7 == 0 ? 0.0 : pick( i, 5, 1.5, 2.5 );
      d[ nest::names::V_reset ] = pick( i, 6, -62.0, -58.0 );
      d[ nest::names::t_ref ] = t_refs[ i % 4 ];
      d[ nest::names::a ] = pick( i, 7, 2.0, 6.0 );
      d[ nest::names::b ] = pick( i, 8, 40.0, 100.0 );
      d[ nest::names::tau_w ] = pick( i, 9, 100.0, 200.0 );
      d[ nest::names::E_rev ] =
        std::vector< double > { pick( i, 10, -5.0, 5.0 ), pick( i, 11, -90.0, -75.0 ), pick( i, 12, -20.0, 0.0 ) };
      d[ nest::names::tau_syn ] = std::vector< double > { stiff ? 0.1 : pick( i, 13, 0.2, 1.0 ),
        pick( i, 14, 2.0, 5.0 ), pick( i, 15, 5.0, 20.0 ) };
      d[ nest::names::I_e ] = pick( i, 16, 0.0, 200.0 );
      if ( i % 5 == 0 || stiff )
      {
        d[ nest::names::gsl_error_tol ] = stiff ? 1e-9 : 1e-7;
      }
      d[ nest::names::V_m ] = pick( i, 17, -70.0, -55.0 );
      d[ nest::names::w ] = q16( pick( i, 18, 0.0, 50.0 ) );
    };
    s.p_ex = 0.05;
    s.w_ex = 2.0;
    s.p_in = 0.0;
    s.I_lo = 100.0;
    s.I_hi = 500.0;
    // Ports 1..3, drawn per (neuron, step).
    s.rport = []( size_t i, long t, bool ) { return 1L + static_cast< long >( 3.0 * u01( i, t, 22 ) ); };
  }
  else if ( model == "hh_psc_alpha" )
  {
    // Hodgkin-Huxley spikes: fast and stiff, the step size shrinks and grows through each.
    s.random_state = false;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      d[ nest::names::C_m ] = pick( i, 1, 80.0, 120.0 );
      d[ nest::names::t_ref ] = i % 2 == 0 ? 0.0 : 2.0;
      d[ nest::names::tau_syn_ex ] = pick( i, 2, 0.1, 1.0 );
      d[ nest::names::tau_syn_in ] = pick( i, 3, 1.0, 3.0 );
      d[ nest::names::I_e ] = pick( i, 4, 0.0, 600.0 );
      d[ nest::names::V_m ] = pick( i, 5, -70.0, -60.0 );
    };
    s.p_ex = 0.05;
    s.w_ex = 100.0;
    s.p_in = 0.03;
    s.w_in = 150.0;
    s.I_lo = 0.0;
    s.I_hi = 400.0;
  }
  else if ( model == "iaf_tum_2000" )
  {
    // iaf_psc_exp's membrane, plus short-term plasticity whose jump each spike carries as its
    // offset (std::exp and std::expm1 in update() are glibc's on the device too, so no
    // tolerance). Excitatory input of odd neurons arrives on receptor 1, scaled by the
    // offset each input spike carries; some neurons facilitate (tau_fac > 0).
    s.params = []( size_t i, nest::Dictionary& d )
    {
      iaf_common( i, d, false );
      d[ nest::names::tau_syn_ex ] = pick( i, 8, 0.5, 5.0 );
      d[ nest::names::tau_syn_in ] = pick( i, 9, 0.5, 5.0 );
      d[ nest::names::tau_psc ] = pick( i, 10, 1.0, 5.0 );
      d[ nest::names::tau_rec ] = pick( i, 11, 50.0, 800.0 );
      d[ nest::names::tau_fac ] = i % 3 == 0 ? 0.0 : pick( i, 12, 10.0, 1000.0 );
      d[ nest::names::U ] = pick( i, 13, 0.05, 0.6 );
    };
    s.p_ex = 0.05;
    s.w_ex = 80.0;
    s.p_in = 0.03;
    s.w_in = 130.0;
    s.I_lo = 250.0;
    s.I_hi = 450.0;
    s.rport = []( size_t i, long, bool ex ) { return ex && i % 2 == 1 ? 1L : 0L; };
    // The offset a receptor-1 spike carries: a sender's jump in (0, 1], a multiple of 2^-16, so
    // that weight times offset is exact in the native double ring and the fixed-point ring.
    s.offset = []( size_t i, long t, bool ex )
    { return ex && i % 2 == 1 ? 2.0 * q16( 0.05 + 0.45 * u01( i, t, 41 ) ) : 0.0; };
  }
  else if ( model == "parrot_neuron" )
  {
    // No parameters and no state: each step's count of spikes comes back one step later as a
    // spike of that multiplicity, whatever the weights (negative ones included); two inputs in
    // one step give multiplicity 2. (Its route refuses port 1, whose spikes NEST's parrot drops:
    // such connections stay with NEST, and the engine refuses them.)
    s.random_state = false;
    s.currents = false;
    s.logged = false;
    s.params = []( size_t, nest::Dictionary& ) {};
    s.p_ex = 0.05;
    s.w_ex = 80.0;
    s.p_in = 0.03;
    s.w_in = 130.0;
  }
  else if ( model == "pp_psc_delta" )
  {
    // Its spikes are random (Poisson counts, Bernoulli trials, gamma dead times): the device
    // draws them from its own Philox streams, NEST from its generator, so only a rate of 0
    // (c_1 = c_2 = 0: no draw at all) compares bit for bit here: input integration, adaptation
    // decay over K = 2 elements and the dead-time countdown. The draws are tested in
    // distribution by test_engine_dist.
    s.K = 2;
    s.params = []( size_t i, nest::Dictionary& d )
    {
      d[ nest::names::C_m ] = pick( i, 1, 200.0, 300.0 );
      d[ nest::names::tau_m ] = pick( i, 2, 5.0, 20.0 );
      d[ nest::names::I_e ] = pick( i, 3, 0.0, 100.0 );
      d[ nest::names::dead_time ] = i % 3 == 0 ? 0.0 : pick( i, 4, 0.5, 3.0 );
      d[ nest::names::with_reset ] = i % 2 == 0;
      d[ nest::names::c_1 ] = 0.0;
      d[ nest::names::c_2 ] = 0.0;
      d[ nest::names::c_3 ] = pick( i, 5, 0.1, 0.5 );
      d[ nest::names::tau_sfa ] = std::vector< double > { pick( i, 6, 10.0, 100.0 ), pick( i, 7, 100.0, 500.0 ) };
      d[ nest::names::q_sfa ] = std::vector< double > { pick( i, 8, 1.0, 10.0 ), pick( i, 9, 0.0, 5.0 ) };
    };
    s.p_ex = 0.05;
    s.w_ex = 2.0;
    s.p_in = 0.03;
    s.w_in = 2.0;
    s.I_lo = 0.0;
    s.I_hi = 300.0;
    s.spikes_expected = false;
  }
  else
  {
    std::fprintf( stderr, "error: no trajectory set-up for model '%s'\n", model.c_str() );
    std::exit( 1 );
  }
  return s;
}

void
spikes_for( const Setup& s, size_t i, long t, std::vector< SpikeIn >& out )
{
  out.clear();
  const double p_ex = s.p_ex * ( 0.5 + u01( i, 0, 31 ) );
  const double p_in = s.p_in * ( 0.5 + u01( i, 0, 32 ) );
  if ( u01( i, t, 33 ) < p_ex )
  {
    out.push_back( { q16( s.w_ex * ( 0.5 + u01( i, t, 34 ) ) ), s.rport( i, t, true ), s.offset( i, t, true ) } );
  }
  if ( u01( i, t, 35 ) < p_in )
  {
    out.push_back( { -q16( s.w_in * ( 0.5 + u01( i, t, 36 ) ) ), s.rport( i, t, false ), s.offset( i, t, false ) } );
  }
}

void
currents_for( const Setup& s, size_t i, long t, std::vector< CurrentIn >& out )
{
  out.clear();
  if ( !s.currents )
  {
    return;
  }
  out.push_back( { q16( s.I_lo + ( s.I_hi - s.I_lo ) * u01( i, t / 1000, 37 ) ), 0 } );
  if ( s.extra_currents )
  {
    s.extra_currents( i, t, out );
  }
}

/* ---- SoA --------------------------------------------------------------- */

struct SoA
{
  size_t n = 0;
  uint32_t K = 0;
  std::vector< std::vector< unsigned char > > data;
  std::vector< void* > ptrs;

  static size_t
  per_neuron( const nestcl_field& f, uint32_t K )
  {
    return nestcl_field_len( &f, K );
  }

  SoA( size_t n_, uint32_t K_ )
    : n( n_ )
    , K( K_ )
  {
    for ( int f = 0; f < DESC->n_fields; ++f )
    {
      data.emplace_back( bytes( f ), 0 );
    }
    for ( auto& d : data )
    {
      ptrs.push_back( d.data() );
    }
  }
  SoA( const SoA& o )
    : n( o.n )
    , K( o.K )
    , data( o.data )
  {
    for ( auto& d : data )
    {
      ptrs.push_back( d.data() );
    }
  }
  SoA& operator=( const SoA& ) = delete;

  size_t
  bytes( int f ) const
  {
    const nestcl_field& fd = DESC->fields[ f ];
    return nestcl_field_type_size( fd.type ) * per_neuron( fd, K ) * n;
  }
  void* const*
  fields() const
  {
    return ptrs.data();
  }
};

/* Value of element e (k * n + i) of field f as a double, for messages and recording. */
double
value_of( const SoA& s, int f, size_t e )
{
  const void* p = s.ptrs[ f ];
  switch ( DESC->fields[ f ].type )
  {
    case NESTCL_T_DOUBLE:
      return static_cast< const double* >( p )[ e ];
    case NESTCL_T_LONG:
      return static_cast< double >( static_cast< const int64_t* >( p )[ e ] );
    case NESTCL_T_SIZE:
      return static_cast< double >( static_cast< const uint64_t* >( p )[ e ] );
    default:
      return static_cast< double >( static_cast< const int32_t* >( p )[ e ] );
  }
}

std::string
describe( int f, size_t e, size_t n, double want, double got )
{
  char buf[ 512 ];
  std::snprintf( buf, sizeof buf, "%s::%s neuron %zu element %zu: native %.17g, translated %.17g",
    DESC->fields[ f ].struct_name, DESC->fields[ f ].member, e % n, e / n, want, got );
  return buf;
}

bool
tolerant( const Setup& s, int f )
{
  for ( const auto& name : s.tolerant_fields )
  {
    if ( name == DESC->fields[ f ].member )
    {
      return true;
    }
  }
  return false;
}

/*
 * Compares the fields with the given roles (-1: all) of want and got. Exact
 * unless tolerance > 0 and the field is listed tolerant; then the largest
 * scaled deviation goes to *max_dev. Returns an empty string or the first
 * mismatch.
 */
std::string
compare( const SoA& want, const SoA& got, int role, const Setup* tol, double* max_dev )
{
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    if ( role >= 0 && DESC->fields[ f ].role != role )
    {
      continue;
    }
    const size_t b = want.bytes( f );
    if ( std::memcmp( want.data[ f ].data(), got.data[ f ].data(), b ) == 0 )
    {
      continue;
    }
    const size_t elems = b / nestcl_field_type_size( DESC->fields[ f ].type );
    const bool tolerate = tol && tol->tolerance > 0 && tolerant( *tol, f ) && DESC->fields[ f ].type == NESTCL_T_DOUBLE;
    for ( size_t e = 0; e < elems; ++e )
    {
      const size_t sz = nestcl_field_type_size( DESC->fields[ f ].type );
      if ( std::memcmp( want.data[ f ].data() + e * sz, got.data[ f ].data() + e * sz, sz ) == 0 )
      {
        continue;
      }
      const double a = value_of( want, f, e ), g = value_of( got, f, e );
      if ( tolerate )
      {
        const double dev = std::fabs( a - g ) / std::max( { 1.0, std::fabs( a ), std::fabs( g ) } );
        if ( dev <= tol->tolerance )
        {
          *max_dev = std::max( *max_dev, dev );
          continue;
        }
      }
      return describe( f, e, want.n, a, g );
    }
  }
  return "";
}

/* One sent spike: the neuron, the lag and the event's offset (bit for bit). */
struct Spike
{
  uint32_t index, lag;
  double offset;
  uint64_t
  offset_bits() const
  {
    uint64_t b;
    std::memcpy( &b, &offset, sizeof b );
    return b;
  }
  bool
  operator<( const Spike& o ) const
  {
    return index != o.index ? index < o.index : lag != o.lag ? lag < o.lag : offset_bits() < o.offset_bits();
  }
  bool
  operator==( const Spike& o ) const
  {
    return index == o.index && lag == o.lag && offset_bits() == o.offset_bits();
  }
};

/*
 * Two sorted spike lists alike: the same neurons and lags, and the same
 * offsets, bit for bit, or (tol > 0: offsets computed with std::exp on one side
 * and the portable math on the other) within tol * max(1, |a|, |b|).
 */
bool
same_spikes( const std::vector< Spike >& a, const std::vector< Spike >& b, double tol )
{
  if ( a.size() != b.size() )
  {
    return false;
  }
  for ( size_t k = 0; k < a.size(); ++k )
  {
    if ( a[ k ].index != b[ k ].index || a[ k ].lag != b[ k ].lag )
    {
      return false;
    }
    const double x = a[ k ].offset, y = b[ k ].offset;
    if ( a[ k ].offset_bits() != b[ k ].offset_bits()
      && !( tol > 0 && std::fabs( x - y ) <= tol * std::max( { 1.0, std::fabs( x ), std::fabs( y ) } ) ) )
    {
      return false;
    }
  }
  return true;
}

uint32_t
n_channels( uint32_t K )
{
  uint32_t c = 0;
  for ( int g = 0; g < DESC->n_channel_groups; ++g )
  {
    c += DESC->channels[ g ].count < 0 ? K : static_cast< uint32_t >( DESC->channels[ g ].count );
  }
  return c;
}

/* Rows of the recording block per step and, per row, the (field, element k). */
std::vector< std::pair< int, size_t > >
recording_rows( uint32_t K )
{
  std::vector< std::pair< int, size_t > > rows;
  for ( int r = 0; r < DESC->n_recordables; ++r )
  {
    const int f = DESC->recordables[ r ];
    for ( size_t k = 0; k < SoA::per_neuron( DESC->fields[ f ], K ); ++k )
    {
      rows.push_back( { f, k } );
    }
  }
  return rows;
}

/*
 * Checks block `block` (= lag - from) of rec after an update call: written iff
 * the hook's condition holds for step, with the values of s (the native state
 * after that step); tolerant fields as in compare().
 */
std::string
check_recording( const std::vector< double >& rec, size_t block, const SoA& s,
  const std::vector< std::pair< int, size_t > >& rows, long step, const Setup* tol )
{
  const bool due = ( step + 1 ) % REC_INTERVAL == 0;
  for ( size_t r = 0; r < rows.size(); ++r )
  {
    for ( size_t i = 0; i < s.n; ++i )
    {
      const double got = rec[ ( block * rows.size() + r ) * s.n + i ];
      const double want = value_of( s, rows[ r ].first, rows[ r ].second * s.n + i );
      const bool tolerated = due && tol && tol->tolerance > 0 && tolerant( *tol, rows[ r ].first )
        && std::fabs( got - want ) <= tol->tolerance * std::max( { 1.0, std::fabs( got ), std::fabs( want ) } );
      if ( due ? std::memcmp( &got, &want, sizeof got ) != 0 && !tolerated : !std::isnan( got ) )
      {
        char buf[ 256 ];
        std::snprintf( buf, sizeof buf, "recording at step %ld (%s), row %zu (%s), neuron %zu: %.17g, expected %.17g",
          step, due ? "due" : "not due", r, DESC->fields[ rows[ r ].first ].member, i, got, due ? want : NAN );
        return buf;
      }
    }
  }
  return "";
}

/*
 * The harness's own check (--perturb): one-ulp changes of a neuron's state
 * must be caught. Every scalar double state field is nudged, because some
 * (input currents) are overwritten by the next step and would hide it.
 */
void
perturb_one_ulp( SoA& s, size_t i )
{
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    if ( DESC->fields[ f ].role == NESTCL_ROLE_STATE && DESC->fields[ f ].type == NESTCL_T_DOUBLE
      && DESC->fields[ f ].array_len == 0 )
    {
      double& x = static_cast< double* >( s.ptrs[ f ] )[ i ];
      x = std::nextafter( x, HUGE_VAL );
      std::fprintf( stderr, "perturbed %s of neuron %zu by one ulp\n", DESC->fields[ f ].member, i );
    }
  }
}

/* ---- OpenCL path -------------------------------------------------------- */

struct ClPath
{
  nestcl_device* dev = nullptr;
  cl_program prog = nullptr;
  cl_kernel kernel = nullptr;
  cl_command_queue q = nullptr;
  nestcl_buffer ring {}, count {}, spikes {}, rec {}, offsets {};
  std::vector< nestcl_buffer > fields;

  ~ClPath()
  {
    if ( dev )
    {
      for ( auto& b : fields )
      {
        nestcl_buffer_free( dev, &b );
      }
      nestcl_buffer_free( dev, &ring );
      nestcl_buffer_free( dev, &count );
      nestcl_buffer_free( dev, &spikes );
      nestcl_buffer_free( dev, &offsets );
      nestcl_buffer_free( dev, &rec );
      if ( kernel )
      {
        clReleaseKernel( kernel );
      }
      if ( prog )
      {
        clReleaseProgram( prog );
      }
      nestcl_device_close( dev );
    }
  }
};

#define CL_CHECK( call, what )                                                                                         \
  do                                                                                                                   \
  {                                                                                                                    \
    const cl_int err_ = ( call );                                                                                      \
    if ( err_ != CL_SUCCESS )                                                                                          \
    {                                                                                                                  \
      std::fprintf( stderr, "error: %s: %s\n", what, nestcl_cl_error_name( err_ ) );                                   \
      return 1;                                                                                                        \
    }                                                                                                                  \
  } while ( 0 )

/* Returns 0, 1 (error), or NESTCL_SKIP (77) when there is no OpenCL device. */
int
cl_open( ClPath& cl, const char* spec, const SoA& init, size_t ring_elems, size_t rec_elems )
{
  int rc = nestcl_device_open( spec, 1, &cl.dev );
  if ( rc == NESTCL_ENODEV )
  {
    std::fprintf( stderr, "skip: no OpenCL device: %s\n", nestcl_last_error() );
    cl.dev = nullptr;
    return 77;
  }
  if ( rc )
  {
    std::fprintf( stderr, "error: %s\n", nestcl_last_error() );
    cl.dev = nullptr;
    return 1;
  }
  const std::string source = std::string( nestcl_rt_source ) + DESC->kernel_source;
  // Translated code calls nestcl_glibc_exp( x, NESTCL_LIBM_VARIANT ): the host's glibc variant, as the runtime builds it.
  // An ODE state vector of A + B K doubles gets private room for the population's K (NESTCL_K_MAX), as in
  // nestcl_block and the engine: the default room (NESTCL_ODE_K_MAX receptors) in every work-item of a
  // large work-group overflows PoCL's stack.
  const std::string options = "-DNESTCL_LIBM_VARIANT=" + std::to_string( nestcl_libm_host_variant() != 0 ? 1 : 0 )
    + " -DNESTCL_K_MAX=" + std::to_string( init.K ? init.K : 1u );
  if ( nestcl_program_build( cl.dev, source.c_str(), options.c_str(), &cl.prog ) )
  {
    std::fprintf( stderr, "error: %s\n", nestcl_last_error() );
    return 1;
  }
  cl_int err = CL_SUCCESS;
  cl.kernel = clCreateKernel( cl.prog, DESC->kernel_name, &err );
  CL_CHECK( err, "clCreateKernel" );
  cl.q = nestcl_device_queue( cl.dev, 0 );
  const cl_mem_flags rw = CL_MEM_READ_WRITE;
  std::vector< int64_t > zero_ring( ring_elems, 0 );
  if ( nestcl_buffer_alloc( cl.dev, NESTCL_MEM_RING, "ring", ring_elems * 8, rw, zero_ring.data(), &cl.ring )
    || nestcl_buffer_alloc( cl.dev, NESTCL_MEM_OTHER, "spike count", NESTCL_COUNT_WORDS * 4, rw, nullptr, &cl.count )
    || nestcl_buffer_alloc( cl.dev, NESTCL_MEM_OTHER, "spikes", init.n * MIN_DELAY * 8, rw, nullptr, &cl.spikes )
    || ( DESC->spike_offsets
      && nestcl_buffer_alloc(
        cl.dev, NESTCL_MEM_OTHER, "spike offsets", init.n * MIN_DELAY * 8, rw, nullptr, &cl.offsets ) )
    || nestcl_buffer_alloc( cl.dev, NESTCL_MEM_RECORDING, "rec", rec_elems * 8, rw, nullptr, &cl.rec ) )
  {
    std::fprintf( stderr, "error: %s\n", nestcl_last_error() );
    return 1;
  }
  cl.fields.resize( DESC->n_fields );
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    if ( nestcl_buffer_alloc(
           cl.dev, NESTCL_MEM_STATE, DESC->fields[ f ].member, init.bytes( f ), rw, init.ptrs[ f ], &cl.fields[ f ] ) )
    {
      std::fprintf( stderr, "error: %s\n", nestcl_last_error() );
      return 1;
    }
  }
  const cl_uint n = static_cast< cl_uint >( init.n ), K = init.K;
  const cl_double h = nest::Time::get_resolution().get_ms();
  const cl_uint slots = RING_SLOTS, nch = n_channels( init.K ), cap = static_cast< cl_uint >( init.n * MIN_DELAY );
  const cl_long rec_interval = REC_INTERVAL;
  CL_CHECK( clSetKernelArg( cl.kernel, 0, sizeof n, &n ), "arg n" );
  CL_CHECK( clSetKernelArg( cl.kernel, 1, sizeof K, &K ), "arg K" );
  CL_CHECK( clSetKernelArg( cl.kernel, 5, sizeof h, &h ), "arg resolution_ms" );
  CL_CHECK( clSetKernelArg( cl.kernel, 6, sizeof slots, &slots ), "arg ring_slots" );
  CL_CHECK( clSetKernelArg( cl.kernel, 7, sizeof nch, &nch ), "arg n_channels" );
  CL_CHECK( clSetKernelArg( cl.kernel, 8, sizeof( cl_mem ), &cl.ring.mem ), "arg ring" );
  CL_CHECK( clSetKernelArg( cl.kernel, 9, sizeof( cl_mem ), &cl.count.mem ), "arg spike_count" );
  CL_CHECK( clSetKernelArg( cl.kernel, 10, sizeof( cl_mem ), &cl.spikes.mem ), "arg spikes" );
  CL_CHECK( clSetKernelArg( cl.kernel, 11, sizeof cap, &cap ), "arg spike_capacity" );
  CL_CHECK( clSetKernelArg( cl.kernel, 12, sizeof rec_interval, &rec_interval ), "arg rec_interval" );
  CL_CHECK( clSetKernelArg( cl.kernel, 13, sizeof( cl_mem ), &cl.rec.mem ), "arg rec" );
  // the draws' seed and ids: the C loop gets the same (run_cpu)
  const cl_uint rng_seed = TRAJ_RNG_SEED;
  const cl_ulong id_first = 1, id_stride = 1;
  CL_CHECK( clSetKernelArg( cl.kernel, 14, sizeof rng_seed, &rng_seed ), "arg rng_seed" );
  CL_CHECK( clSetKernelArg( cl.kernel, 15, sizeof id_first, &id_first ), "arg id_first" );
  CL_CHECK( clSetKernelArg( cl.kernel, 16, sizeof id_stride, &id_stride ), "arg id_stride" );
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    CL_CHECK(
      clSetKernelArg( cl.kernel, NESTCL_UPDATE_FIXED_ARGS + f, sizeof( cl_mem ), &cl.fields[ f ].mem ), "arg field" );
  }
  if ( DESC->spike_offsets )
  {
    CL_CHECK( clSetKernelArg( cl.kernel, NESTCL_UPDATE_FIXED_ARGS + DESC->n_fields, sizeof( cl_mem ), &cl.offsets.mem ),
      "arg spike_offsets" );
  }
  return 0;
}

/* Lags [lag_from, lag_to) on the device; reads back every field, the spikes and the recording block. */
int
cl_step( ClPath& cl, long origin, long lag_from, long lag_to, SoA& out, std::vector< Spike >& spikes,
  std::vector< double >& rec )
{
  const cl_long o = origin;
  const cl_int from = static_cast< cl_int >( lag_from ), to = static_cast< cl_int >( lag_to );
  const cl_uint zero[ NESTCL_COUNT_WORDS ] = {};
  CL_CHECK( clSetKernelArg( cl.kernel, 2, sizeof o, &o ), "arg origin_steps" );
  CL_CHECK( clSetKernelArg( cl.kernel, 3, sizeof from, &from ), "arg from" );
  CL_CHECK( clSetKernelArg( cl.kernel, 4, sizeof to, &to ), "arg to" );
  CL_CHECK(
    clEnqueueWriteBuffer( cl.q, cl.count.mem, CL_FALSE, 0, sizeof zero, zero, 0, nullptr, nullptr ), "reset count" );
  if ( !rec.empty() )  // a model without recordables records nothing
  {
    CL_CHECK( clEnqueueWriteBuffer( cl.q, cl.rec.mem, CL_FALSE, 0, rec.size() * 8, rec.data(), 0, nullptr, nullptr ),
      "reset rec" );
  }
  const size_t global = out.n;
  CL_CHECK( clEnqueueNDRangeKernel( cl.q, cl.kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr ), "kernel" );
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    CL_CHECK(
      clEnqueueReadBuffer( cl.q, cl.fields[ f ].mem, CL_FALSE, 0, out.bytes( f ), out.ptrs[ f ], 0, nullptr, nullptr ),
      "read field" );
  }
  cl_uint words[ NESTCL_COUNT_WORDS ] = {};
  CL_CHECK(
    clEnqueueReadBuffer( cl.q, cl.count.mem, CL_TRUE, 0, sizeof words, words, 0, nullptr, nullptr ), "read count" );
  if ( words[ 1 ] != 0 )
  {
    std::fprintf( stderr, "error: the OpenCL update reported failure %u of neuron %u at step %ld (status %d)\n",
      words[ 1 ], words[ 2 ], origin + static_cast< long >( words[ 3 ] ), static_cast< int >( words[ 4 ] ) );
    return 1;
  }
  const cl_uint count = words[ 0 ];
  if ( count > out.n * ( lag_to - lag_from ) )
  {
    std::fprintf( stderr, "error: OpenCL spike list overflow (%u > %zu)\n", count, out.n );
    return 1;
  }
  std::vector< nestcl_spike > list( count );
  std::vector< double > offsets( count, 0.0 );
  if ( count )
  {
    CL_CHECK( clEnqueueReadBuffer( cl.q, cl.spikes.mem, CL_TRUE, 0, count * 8, list.data(), 0, nullptr, nullptr ),
      "read spikes" );
    if ( DESC->spike_offsets )
    {
      CL_CHECK( clEnqueueReadBuffer( cl.q, cl.offsets.mem, CL_TRUE, 0, count * 8, offsets.data(), 0, nullptr, nullptr ),
        "read spike offsets" );
    }
  }
  spikes.clear();
  for ( cl_uint k = 0; k < count; ++k )
  {
    spikes.push_back( { list[ k ].index, list[ k ].lag, offsets[ k ] } );
  }
  if ( !rec.empty() )
  {
    CL_CHECK( clEnqueueReadBuffer( cl.q, cl.rec.mem, CL_TRUE, 0, rec.size() * 8, rec.data(), 0, nullptr, nullptr ),
      "read rec" );
  }
  CL_CHECK( clFinish( cl.q ), "finish" );
  return 0;
}

/* ---- host helper checks -------------------------------------------------- */

int
check_host_helpers( const Setup& s, const std::vector< std::unique_ptr< Model > >& nodes, const SoA& soa )
{
  // pre_run from the packed parameters must reproduce pre_run_hook()'s Variables_ bit for bit
  // (a model without Variables_, parrot_neuron, needs none).
  bool has_internal = false;
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    has_internal = has_internal || DESC->fields[ f ].role == NESTCL_ROLE_INTERNAL;
  }
  if ( !DESC->pre_run && has_internal )
  {
    return nestcl_test::fail( "pre_run", "the descriptor has no translated pre_run" );
  }
  SoA tmp( soa );
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    if ( DESC->fields[ f ].role == NESTCL_ROLE_INTERNAL )
    {
      std::fill( tmp.data[ f ].begin(), tmp.data[ f ].end(), 0 );
    }
  }
  for ( size_t i = 0; i < soa.n && DESC->pre_run; ++i )
  {
    if ( DESC->pre_run( tmp.fields(), soa.n, i, soa.K, nest::Time::get_resolution().get_ms() ) != 0 )
    {
      return nestcl_test::fail( "pre_run", std::string( "returned an error: " ) + nestcl_last_error() );
    }
  }
  std::string diff = compare( soa, tmp, NESTCL_ROLE_INTERNAL, nullptr, nullptr );
  if ( !diff.empty() )
  {
    return nestcl_test::fail( "pre_run", diff );
  }

  // set_defaults must match the constructors (a default node, with its own receptor count).
  Model def;
  uint32_t K_def = 0;
  if ( DESC->has_receptors )
  {
    nest::Dictionary d;
    def.get_status( d );
    K_def = d.known( "n_synapses" ) ? static_cast< uint32_t >( d.get< long >( "n_synapses" ) ) : 1;
  }
  if ( DESC->set_defaults )
  {
    SoA a( 1, K_def ), b( 1, K_def );
    pack( def, a.fields(), 1, 0 );
    DESC->set_defaults( b.fields(), 1, 0, K_def );
    for ( int role : { NESTCL_ROLE_STATE, NESTCL_ROLE_PARAMETER } )
    {
      diff = compare( a, b, role, nullptr, nullptr );
      if ( !diff.empty() )
      {
        return nestcl_test::fail( "set_defaults", diff );
      }
    }
  }
  else
  {
    return nestcl_test::fail( "set_defaults", "the descriptor has no translated set_defaults" );
  }

  // get_status: every number the translation reports equals the native dictionary's.
  if ( DESC->get_status )
  {
    size_t matched = 0;
    for ( size_t i = 0; i < std::min< size_t >( soa.n, 50 ); ++i )
    {
      nest::Dictionary d;
      nodes[ i ]->get_status( d );
      for ( const auto& entry : d )
      {
        double want;
        if ( const double* p = std::get_if< double >( &entry.second ) )
        {
          want = *p;
        }
        else if ( const bool* q = std::get_if< bool >( &entry.second ) )
        {
          want = *q ? 1.0 : 0.0;
        }
        else
        {
          continue;
        }
        double got = 0;
        if ( DESC->get_status( soa.fields(), soa.n, i, soa.K, entry.first.c_str(), &got ) != 0 )
        {
          continue;
        }
        if ( std::memcmp( &got, &want, sizeof got ) != 0 )
        {
          char buf[ 256 ];
          std::snprintf(
            buf, sizeof buf, "'%s' of neuron %zu: %.17g, native %.17g", entry.first.c_str(), i, got, want );
          return nestcl_test::fail( "get_status", buf );
        }
        ++matched;
      }
    }
    double v;
    if ( matched == 0 || DESC->get_status( soa.fields(), soa.n, 0, soa.K, "no_such_name", &v ) == 0 )
    {
      return nestcl_test::fail( "get_status", "no name matched, or an unknown name was accepted" );
    }
  }
  (void) s;
  return 0;
}

/* ---- the stream-VP path (nestcl_block + glue) --------------------------- */

const size_t LOGGED = 8;  // nodes with a multimeter (interval 1 step) in both populations

struct StreamPath
{
  nestcl_device* dev = nullptr;
  nestcl_block* block = nullptr;
  const nestcl_glue::entry* glue = nullptr;
  std::vector< std::unique_ptr< Model > > nodes;
  std::vector< nest::DataLoggingRequest > dlr_native, dlr_stream;
  std::vector< double > drained, sample;
  uint32_t K = 0;
  ~StreamPath()
  {
    nestcl_block_destroy( block );
    if ( dev )
    {
      nestcl_device_close( dev );
    }
  }
};

int
stream_open( StreamPath& st, const char* spec, const Setup& setup, uint32_t K, size_t N, const SoA& init )
{
  size_t count = 0;
  const nestcl_glue::entry* t = nestcl_glue::table( &count );
  for ( size_t k = 0; k < count; ++k )
  {
    if ( std::strcmp( t[ k ].name, MODEL_NAME ) == 0 )
    {
      st.glue = &t[ k ];
    }
  }
  if ( !st.glue || st.glue->model != DESC )
  {
    return nestcl_test::fail( "glue table", std::string( "no entry for " ) + MODEL_NAME );
  }
  st.K = K;
  // Node ids after the native population's, so the emitted spikes tell the two apart.
  for ( size_t i = 0; i < N; ++i )
  {
    st.nodes.emplace_back( new Model() );
    st.nodes.back()->set_node_id_( N + i + 1 );
    nest::Dictionary d;
    setup.params( i, d );
    st.nodes.back()->set_status( d );
    st.nodes.back()->init();
    static_cast< nest::Node& >( *st.nodes.back() ).pre_run_hook();
    st.glue->unpack( *st.nodes.back(), init.fields(), N, i );
    if ( st.glue->receptors( *st.nodes.back() ) != K )
    {
      return nestcl_test::fail( "glue receptors", "node " + std::to_string( i ) + " does not report K receptors" );
    }
  }
  const size_t logged = setup.logged ? std::min( LOGGED, N ) : 0;
  st.dlr_native.assign( logged, nest::DataLoggingRequest( 1 ) );
  st.dlr_stream.assign( logged, nest::DataLoggingRequest( 1 ) );
  for ( size_t i = 0; i < st.dlr_stream.size(); ++i )
  {
    st.nodes[ i ]->handles_test_event( st.dlr_stream[ i ], 0 );
  }
  if ( nestcl_device_open( spec, 1, &st.dev ) != 0 )
  {
    return nestcl_test::fail( "stream device", nestcl_last_error() );
  }
  nestcl_block_config c {};
  c.model = DESC;
  c.n = static_cast< uint32_t >( N );
  c.K = K;
  c.resolution_ms = nest::Time::get_resolution().get_ms();
  c.min_delay_steps = MIN_DELAY;
  c.ring_slots = RING_SLOTS;
  c.queue = 0;
  c.record = setup.logged ? 1 : 0;
  if ( nestcl_block_create( st.dev, &c, &st.block ) != 0 )
  {
    return nestcl_test::fail( "stream block", nestcl_last_error() );
  }
  for ( size_t i = 0; i < N; ++i )
  {
    st.glue->pack( *st.nodes[ i ], nestcl_block_fields( st.block ), N, i );
  }
  if ( nestcl_block_upload( st.block ) != 0 )
  {
    return nestcl_test::fail( "stream upload", nestcl_last_error() );
  }
  st.drained.assign( nestcl_block_channels( st.block ), 0.0 );
  st.sample.assign( nestcl_block_recordables( st.block ), 0.0 );
  return 0;
}

/* One slice of lags [0, lags) at origin, as a stream VP runs it; its spikes must be the native ones. */
int
stream_slice( StreamPath& st, long origin, long lags, const std::vector< Spike >& want_all, double tol )
{
  const size_t N = st.nodes.size();
  const uint32_t nch = nestcl_block_channels( st.block );
  for ( size_t i = 0; i < N; ++i )
  {
    for ( long lag = 0; lag < lags; ++lag )
    {
      st.glue->drain( *st.nodes[ i ], lag, st.drained.data(), st.K );
      for ( uint32_t ch = 0; ch < nch; ++ch )
      {
        if ( st.drained[ ch ] != 0.0 )
        {
          nestcl_block_stage(
            st.block, static_cast< uint32_t >( lag ), ch, static_cast< uint32_t >( i ), st.drained[ ch ] );
        }
      }
    }
  }
  if ( nestcl_block_update( st.block, origin, 0, static_cast< int >( lags ) ) != 0 )
  {
    return nestcl_test::fail( "stream update", nestcl_last_error() );
  }
  const nestcl_spike* spikes;
  uint32_t n_spikes;
  nestcl_block_spikes( st.block, &spikes, &n_spikes );
  const double* offsets = nestcl_block_spike_offsets( st.block );
  auto& emitted = nest::kernel().event_delivery_manager.emitted_spikes_;
  emitted.clear();
  // A run of m entries of one neuron and lag is a spike of multiplicity m: one event, as NEST's manager sends it.
  for ( uint32_t k = 0, m; k < n_spikes; k += m )
  {
    for ( m = 1;
          k + m < n_spikes && spikes[ k + m ].index == spikes[ k ].index && spikes[ k + m ].lag == spikes[ k ].lag;
          ++m )
    {
    }
    st.glue->emit( *st.nodes[ spikes[ k ].index ], origin, spikes[ k ].lag, m, offsets ? offsets[ k ] : 0.0 );
  }
  std::vector< Spike > got;
  for ( const auto& e : emitted )
  {
    if ( e.step != origin + static_cast< long >( e.lag ) + 1 )
    {
      return nestcl_test::fail( "stream emit", "send() stamped a spike outside its step" );
    }
    for ( size_t k = 0; k < e.multiplicity; ++k )  // compared spike by spike
    {
      got.push_back( { static_cast< uint32_t >( e.node_id - N - 1 ), static_cast< uint32_t >( e.lag ), e.offset } );
    }
  }
  emitted.clear();
  std::vector< Spike > want( want_all );
  std::sort( want.begin(), want.end() );
  std::sort( got.begin(), got.end() );
  if ( !same_spikes( got, want, tol ) )
  {
    std::fprintf( stderr, "FAIL stream VP, steps %ld..%ld: %zu spikes, native %zu\n", origin, origin + lags - 1,
      got.size(), want.size() );
    return 1;
  }
  const double* rec = nestcl_block_recorded( st.block );
  const uint32_t nrec = nestcl_block_recordables( st.block );
  for ( long lag = 0; lag < lags; ++lag )
  {
    for ( size_t i = 0; i < st.dlr_stream.size(); ++i )
    {
      for ( uint32_t r = 0; r < nrec; ++r )
      {
        st.sample[ r ] = rec[ ( static_cast< size_t >( lag ) * nrec + r ) * N + i ];
      }
      st.glue->record( *st.nodes[ i ], st.sample.data(), origin + lag );
    }
  }
  return 0;
}

/* The end: the block's state is the C loop's, written back into the nodes; the loggers' rows equal native ones. */
int
stream_finish(
  StreamPath& st, const Setup& setup, const std::vector< std::unique_ptr< Model > >& native, const SoA& cpu )
{
  const size_t N = st.nodes.size();
  if ( nestcl_block_download( st.block ) != 0 )
  {
    return nestcl_test::fail( "stream download", nestcl_last_error() );
  }
  SoA back( N, st.K );
  for ( size_t i = 0; i < N; ++i )
  {
    st.glue->unpack( *st.nodes[ i ], nestcl_block_fields( st.block ), N, i );
    st.glue->pack( *st.nodes[ i ], back.fields(), N, i );
  }
  std::string diff = compare( cpu, back, -1, nullptr, nullptr );
  if ( !diff.empty() )
  {
    return nestcl_test::fail( "stream state", diff );
  }
  // Every neuron's spike history (what STDP reads) was recorded as update() records it.
  for ( size_t i = 0; i < N; ++i )
  {
    if ( native[ i ]->get_spiketime_ms() != st.nodes[ i ]->get_spiketime_ms() )
    {
      return nestcl_test::fail( "stream spike history",
        "node " + std::to_string( i ) + ": last spike " + std::to_string( st.nodes[ i ]->get_spiketime_ms() )
          + " ms, native " + std::to_string( native[ i ]->get_spiketime_ms() ) );
    }
  }
  // Translations that call the portable math differ from glibc by an ulp or so (setup.tolerant_fields).
  const double tol = setup.tolerant_fields.empty() ? 0.0 : 1e-12;
  for ( size_t i = 0; i < st.dlr_stream.size(); ++i )
  {
    native[ i ]->handle( st.dlr_native[ i ] );
    st.nodes[ i ]->handle( st.dlr_stream[ i ] );
    const auto& a = st.dlr_native[ i ].rows;
    const auto& b = st.dlr_stream[ i ].rows;
    if ( a.size() != b.size() || a.empty() )
    {
      return nestcl_test::fail( "stream logger",
        "node " + std::to_string( i ) + ": " + std::to_string( b.size() ) + " rows, native "
          + std::to_string( a.size() ) );
    }
    for ( size_t r = 0; r < a.size(); ++r )
    {
      for ( size_t c = 0; c < a[ r ].size() && c < b[ r ].size(); ++c )
      {
        const double x = a[ r ][ c ], y = b[ r ][ c ];
        const bool same = tol == 0.0 ? std::memcmp( &x, &y, sizeof x ) == 0
                                     : std::fabs( x - y ) <= tol * std::max( 1.0, std::fabs( x ) );
        if ( !same || a[ r ].size() != b[ r ].size() )
        {
          char msg[ 160 ];
          std::snprintf( msg, sizeof msg, "node %zu, row %zu, column %zu: %.17g, native %.17g", i, r, c, y, x );
          return nestcl_test::fail( "stream logger", msg );
        }
      }
    }
  }
  return 0;
}

void
usage( FILE* f )
{
  std::fprintf( f,
    "usage: %s [--neurons N] [--steps S] [--device SPEC] [--no-opencl] [--host-only]\n"
    "Runs %s natively, as translated C loop and as translated OpenCL kernel on the\n"
    "same input and compares all fields bit for bit after every step.\n"
    "  --neurons N    population size (default 1000)\n"
    "  --steps S      simulation steps (default 10000)\n"
    "  --device SPEC  OpenCL device (see nestcl-info; default $NESTCL_DEVICE or the first)\n"
    "  --no-opencl    compare the C loop only\n"
    "  --host-only    check only the translated host helpers (pre_run, set_defaults,\n"
    "                 get_status) against the native model\n"
    "  --perturb S    after step S, change every scalar double state field of one\n"
    "                 neuron in the C loop by one ulp (the harness must report a FAIL)\n"
    "Exit status: 0 equal, 1 a difference or an error, 2 usage, 77 no OpenCL device.\n",
    "nestcl_trajectory_" NESTCL_STR( NESTCL_MODEL ), MODEL_NAME );
}
}  // namespace

int
main( int argc, char** argv )
{
  size_t N = 1000;
  long steps = 10000;
  const char* device = nullptr;
  bool use_cl = true;
  bool host_only = false;
  long perturb_step = -1;
  for ( int a = 1; a < argc; ++a )
  {
    const std::string arg = argv[ a ];
    if ( arg == "--help" )
    {
      usage( stdout );
      return 0;
    }
    if ( arg == "--version" )
    {
      std::printf( "nestcl_trajectory %s\n", MODEL_NAME );
      return 0;
    }
    if ( arg == "--no-opencl" )
    {
      use_cl = false;
    }
    else if ( arg == "--host-only" )
    {
      host_only = true;
    }
    else if ( ( arg == "--neurons" || arg == "--steps" || arg == "--device" || arg == "--perturb" ) && a + 1 < argc )
    {
      const char* v = argv[ ++a ];
      if ( arg == "--device" )
      {
        device = v;
        continue;
      }
      char* end = nullptr;
      const long x = std::strtol( v, &end, 10 );
      if ( *end || x <= 0 )
      {
        std::fprintf( stderr, "error: %s needs a positive integer\n", arg.c_str() );
        return 2;
      }
      if ( arg == "--neurons" )
      {
        N = static_cast< size_t >( x );
      }
      else if ( arg == "--perturb" )
      {
        perturb_step = x;
      }
      else
      {
        steps = x;
      }
    }
    else
    {
      std::fprintf( stderr, "error: unknown argument '%s'\n", arg.c_str() );
      usage( stderr );
      return 2;
    }
  }

  const Setup setup = make_setup( MODEL_NAME );
  const uint32_t K = DESC->has_receptors ? setup.K : 0;
  nestcl_test::setup_kernel( setup.resolution_ms, MIN_DELAY, MAX_DELAY );
  const double h = nest::Time::get_resolution().get_ms();

  // Native population, heterogeneous, prepared as NEST's Simulate() would.
  std::vector< std::unique_ptr< Model > > nodes;
  for ( size_t i = 0; i < N; ++i )
  {
    nodes.emplace_back( new Model() );
    nodes.back()->set_node_id_( i + 1 );
    nest::Dictionary d;
    setup.params( i, d );
    nodes.back()->set_status( d );
    nodes.back()->init();
    static_cast< nest::Node& >( *nodes.back() ).pre_run_hook();
  }

  SoA ref( N, K ), cpu( N, K ), clo( N, K );
  for ( size_t i = 0; i < N; ++i )
  {
    pack( *nodes[ i ], cpu.fields(), N, i );
  }
  // Status dictionaries set only some state (V_m); the rest (synaptic currents,
  // refractory counters, pending input) starts heterogeneous through the glue,
  // which also exercises unpack_<model>.
  for ( int f = 0; f < DESC->n_fields; ++f )
  {
    const nestcl_field& fd = DESC->fields[ f ];
    if ( fd.role != NESTCL_ROLE_STATE || fd.nest_name || !setup.random_state )
    {
      continue;
    }
    const size_t elems = SoA::per_neuron( fd, K ) * N;
    for ( size_t e = 0; e < elems; ++e )
    {
      if ( fd.type == NESTCL_T_DOUBLE )
      {
        static_cast< double* >( cpu.ptrs[ f ] )[ e ] = q16( 20.0 * ( u01( e, f, 41 ) - 0.5 ) );
      }
      else if ( fd.type == NESTCL_T_INT )
      {
        static_cast< int32_t* >( cpu.ptrs[ f ] )[ e ] = static_cast< int32_t >( ( e % N ) % 7 );
      }
    }
  }
  for ( size_t i = 0; i < N; ++i )
  {
    unpack( *nodes[ i ], cpu.fields(), N, i );
    pack( *nodes[ i ], ref.fields(), N, i );
  }
  {
    const std::string diff = compare( cpu, ref, -1, nullptr, nullptr );
    if ( !diff.empty() )
    {
      return nestcl_test::fail( "glue unpack", diff );
    }
  }
  if ( check_host_helpers( setup, nodes, cpu ) )
  {
    return 1;
  }
  if ( host_only )
  {
    std::printf(
      "{\"model\": \"%s\", \"neurons\": %zu, \"pre_run\": \"bit-identical\", \"set_defaults\": \"bit-identical\", "
      "\"get_status\": \"equal\"}\n",
      MODEL_NAME, N );
    return 0;
  }

  const uint32_t nch = n_channels( K );
  const size_t ring_elems = static_cast< size_t >( RING_SLOTS ) * nch * N;
  std::vector< int64_t > ring( ring_elems, 0 ), cl_ring( ring_elems, 0 );
  const auto rows = recording_rows( K );
  const std::vector< double > rec_blank( rows.size() * N * MIN_DELAY, NAN );
  std::vector< double > rec( rec_blank ), cl_rec( rec_blank );

  ClPath cl;
  if ( use_cl )
  {
    const int rc = cl_open( cl, device, cpu, ring_elems, rec_blank.size() );
    if ( rc )
    {
      return rc;
    }
  }

  // The stream-VP path, what nest_patch does for a NEST thread on the device: a
  // second set of native nodes gets the same input through NEST's own handle(),
  // and is updated by a nestcl_block through the generated glue (pack, drain
  // into the staging, emit, record through the node's own logger, unpack).
  StreamPath st;
  if ( use_cl )
  {
    const int rc = stream_open( st, device, setup, K, N, cpu );
    if ( rc )
    {
      return rc;
    }
    for ( size_t i = 0; i < st.dlr_native.size(); ++i )
    {
      nodes[ i ]->handles_test_event( st.dlr_native[ i ], 0 );
    }
  }

  std::vector< SpikeIn > sp;
  std::vector< CurrentIn > cur;
  std::vector< nestcl_spike > cpu_spikes( N * MIN_DELAY );
  std::vector< double > cpu_offsets( N * MIN_DELAY );
  std::vector< Spike > want_all, want, got, cl_got;
  std::vector< SoA > refs;  // native state after each lag of the super step
  refs.reserve( MIN_DELAY );
  for ( long lag = 0; lag < MIN_DELAY; ++lag )
  {
    refs.emplace_back( N, K );
  }
  size_t total_spikes = 0;
  double c_max_dev = 0;

  // Routes an event of neuron i due at step t into the translated ring, as the engine's delivery will.
  auto route = [ & ]( size_t i, long t, int rc, int ch, double value, const char* what ) -> bool
  {
    if ( rc != 0 || ch < 0 || static_cast< uint32_t >( ch ) >= nch )
    {
      std::fprintf( stderr, "FAIL %s: route of neuron %zu at step %ld gave rc %d channel %d\n", what, i, t, rc, ch );
      return false;
    }
    const uint32_t slot = static_cast< uint32_t >( t % RING_SLOTS );
    const size_t at = ( static_cast< size_t >( slot ) * nch + static_cast< uint32_t >( ch ) ) * N + i;
    ring[ at ] = nestcl_fixed_sum( ring[ at ], nestcl_fixed_from_double( value ) );
    return true;
  };

  for ( long origin = 0; origin < steps; origin += MIN_DELAY )
  {
    nestcl_test::set_slice_origin( origin );

    // The device ring must still equal the C ring: both consumed the same slots.
    if ( use_cl )
    {
      if ( clEnqueueReadBuffer( cl.q, cl.ring.mem, CL_TRUE, 0, ring_elems * 8, cl_ring.data(), 0, nullptr, nullptr )
          != CL_SUCCESS
        || cl_ring != ring )
      {
        return nestcl_test::fail( "ring", "OpenCL ring differs from the C ring at a super-step boundary" );
      }
    }

    // Spikes due one super step ahead, currents due in this one.
    for ( size_t i = 0; i < N; ++i )
    {
      for ( long t = origin + MIN_DELAY; t < origin + 2 * MIN_DELAY; ++t )
      {
        spikes_for( setup, i, t, sp );
        for ( const SpikeIn& e : sp )
        {
          nestcl_test::deliver_spike( *nodes[ i ], t, e.weight, e.rport, 1, e.offset );
          if ( use_cl )
          {
            nestcl_test::deliver_spike( *st.nodes[ i ], t, e.weight, e.rport, 1, e.offset );
          }
          int ch = -1;
          double v = 0;
          int offset_read = 0;
          // A handler that reads the spike's offset routes through route_spike_offset with it.
          const int rc = DESC->route_spike_offset
            ? DESC->route_spike_offset( e.weight, e.rport, K, e.offset, &offset_read, &ch, &v )
            : DESC->route_spike( e.weight, e.rport, K, &ch, &v );
          if ( !route( i, t, rc, ch, v, "route_spike" ) )
          {
            return 1;
          }
        }
      }
      for ( long t = origin; t < origin + MIN_DELAY; ++t )
      {
        currents_for( setup, i, t, cur );
        for ( const CurrentIn& c : cur )
        {
          nestcl_test::deliver_current( *nodes[ i ], t, c.current, 1.0, c.rport );
          if ( use_cl )
          {
            nestcl_test::deliver_current( *st.nodes[ i ], t, c.current, 1.0, c.rport );
          }
          int ch = -1;
          double v = 0;
          const int rc = DESC->route_current( c.current, 1.0, c.rport, K, &ch, &v );
          if ( !route( i, t, rc, ch, v, "route_current" ) )
          {
            return 1;
          }
        }
      }
    }
    if ( use_cl
      && clEnqueueWriteBuffer( cl.q, cl.ring.mem, CL_TRUE, 0, ring_elems * 8, ring.data(), 0, nullptr, nullptr )
        != CL_SUCCESS )
    {
      return nestcl_test::fail( "ring", "upload failed" );
    }

    // Native: NEST's loop, one lag at a time; the state after each lag is kept.
    const long lags = std::min( MIN_DELAY, steps - origin );
    want_all.clear();
    for ( long lag = 0; lag < lags; ++lag )
    {
      const long step = origin + lag;
      for ( auto& node : nodes )
      {
        nestcl_test::update_lag( *node, lag );
      }
      for ( const auto& e : nest::kernel().event_delivery_manager.emitted_spikes_ )
      {
        if ( e.step != step + 1 || e.lag != lag )
        {
          return nestcl_test::fail( "native", "send() stamped a spike outside this step" );
        }
        for ( size_t k = 0; k < e.multiplicity; ++k )  // one spike per unit of multiplicity, as the device lists them
        {
          want_all.push_back( { static_cast< uint32_t >( e.node_id - 1 ), static_cast< uint32_t >( lag ), e.offset } );
        }
      }
      nest::kernel().event_delivery_manager.emitted_spikes_.clear();
      for ( size_t i = 0; i < N; ++i )
      {
        pack( *nodes[ i ], refs[ lag ].fields(), N, i );
      }
    }
    total_spikes += want_all.size();
    if ( use_cl && stream_slice( st, origin, lags, want_all, setup.tolerance ) )
    {
      return 1;
    }

    // Translated: odd super steps in one call over all lags (as the engine
    // runs them: the lag loop inside the kernel), even ones lag by lag (every
    // intermediate state compared).
    const bool whole = ( origin / MIN_DELAY ) % 2 == 1;
    for ( long from = 0; from < lags; from = whole ? lags : from + 1 )
    {
      const long to = whole ? lags : from + 1;
      want.clear();
      for ( const Spike& sp_ : want_all )
      {
        if ( sp_.lag >= from && sp_.lag < to )
        {
          want.push_back( sp_ );
        }
      }
      std::sort( want.begin(), want.end() );
      const SoA& ref_to = refs[ to - 1 ];

      // The C loop.
      uint32_t words[ NESTCL_COUNT_WORDS ] = {};
      rec = rec_blank;
      nestcl_update_args a {};
      a.n = static_cast< uint32_t >( N );
      a.K = K;
      a.origin_steps = origin;
      a.from = static_cast< int >( from );
      a.to = static_cast< int >( to );
      a.resolution_ms = h;
      a.ring_slots = RING_SLOTS;
      a.n_channels = nch;
      a.ring = ring.data();
      a.spike_count = words;
      a.spikes = cpu_spikes.data();
      a.spike_capacity = static_cast< uint32_t >( N * ( to - from ) );
      a.rec_interval = REC_INTERVAL;
      a.rec = rec.data();
      a.rng_seed = TRAJ_RNG_SEED;
      a.id_first = 1;
      a.id_stride = 1;
      a.spike_offsets = cpu_offsets.data();
      DESC->update_cpu( &a, cpu.fields() );
      if ( words[ 1 ] != 0 )
      {
        return nestcl_test::fail( "cpu",
          "the C loop reported failure " + std::to_string( words[ 1 ] ) + " of neuron " + std::to_string( words[ 2 ] )
            + " at step " + std::to_string( origin + static_cast< long >( words[ 3 ] ) ) + " (status "
            + std::to_string( static_cast< int >( words[ 4 ] ) ) + ")" );
      }
      const uint32_t count = words[ 0 ];
      if ( count > a.spike_capacity )
      {
        return nestcl_test::fail( "cpu", "spike list overflow" );
      }
      got.clear();
      for ( uint32_t k = 0; k < count; ++k )
      {
        got.push_back( { cpu_spikes[ k ].index, cpu_spikes[ k ].lag, DESC->spike_offsets ? cpu_offsets[ k ] : 0.0 } );
      }
      std::sort( got.begin(), got.end() );

      std::string diff = compare( ref_to, cpu, -1, &setup, &c_max_dev );
      if ( diff.empty() && !same_spikes( got, want, setup.tolerance ) )
      {
        diff = "spikes differ (" + std::to_string( got.size() ) + " vs native " + std::to_string( want.size() ) + ")";
      }
      for ( long lag = from; diff.empty() && lag < to; ++lag )
      {
        diff = check_recording( rec, lag - from, refs[ lag ], rows, origin + lag, &setup );
      }
      if ( !diff.empty() )
      {
        std::fprintf( stderr, "FAIL C loop, steps %ld..%ld: %s\n", origin + from, origin + to - 1, diff.c_str() );
        return 1;
      }
      if ( perturb_step >= origin + from && perturb_step < origin + to )
      {
        perturb_one_ulp( cpu, N / 2 );
      }

      // The OpenCL kernel.
      if ( use_cl )
      {
        cl_rec = rec_blank;
        if ( cl_step( cl, origin, from, to, clo, cl_got, cl_rec ) )
        {
          return 1;
        }
        std::sort( cl_got.begin(), cl_got.end() );
        // The kernel must equal the C loop exactly (same arithmetic, same
        // portable math), and through it the native original.
        diff = compare( cpu, clo, -1, nullptr, nullptr );
        if ( diff.empty() && cl_got != got )
        {
          diff =
            "spikes differ (" + std::to_string( cl_got.size() ) + " vs C loop " + std::to_string( got.size() ) + ")";
        }
        if ( diff.empty() && std::memcmp( cl_rec.data(), rec.data(), rec.size() * sizeof( double ) ) != 0 )
        {
          diff = "recording block differs from the C loop's";
        }
        if ( !diff.empty() )
        {
          std::fprintf( stderr, "FAIL OpenCL, steps %ld..%ld: %s\n", origin + from, origin + to - 1, diff.c_str() );
          return 1;
        }
      }
    }
  }

  if ( use_cl && stream_finish( st, setup, nodes, cpu ) )
  {
    return 1;
  }

  // The glue round trip: unpack the final SoA into the nodes, pack again, nothing changes.
  SoA again( N, K );
  for ( size_t i = 0; i < N; ++i )
  {
    unpack( *nodes[ i ], cpu.fields(), N, i );
    pack( *nodes[ i ], again.fields(), N, i );
  }
  const std::string diff = compare( cpu, again, -1, nullptr, nullptr );
  if ( !diff.empty() )
  {
    return nestcl_test::fail( "glue round trip", diff );
  }
  if ( setup.spikes_expected && total_spikes < N / 10 )
  {
    return nestcl_test::fail( "set-up", "the input drives too few spikes to test spike emission" );
  }

  std::printf(
    "{\"model\": \"%s\", \"neurons\": %zu, \"steps\": %ld, \"resolution_ms\": %g, \"spikes\": %zu, "
    "\"c_loop\": \"%s\", \"c_loop_max_scaled_deviation\": %g, \"opencl\": \"%s\", \"stream_vp\": \"%s\"}\n",
    MODEL_NAME, N, steps, h, total_spikes, c_max_dev == 0 ? "bit-identical to native" : "within tolerance of native",
    c_max_dev, !use_cl ? "skipped" : "bit-identical to the C loop",
    !use_cl ? "skipped" : "spikes, state and logger rows equal to native" );
  return 0;
}
