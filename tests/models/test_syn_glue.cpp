/*
 * The translator's synapse glue (<model>_syn_glue.hpp, for nest_patch): a
 * native connection packed into the translated struct carries on exactly as
 * the native one. For stdp_pl_synapse_hom (both of NEST's target identifiers)
 * and stdp_synapse, one synapse runs a pre/post spike train natively; a twin
 * runs its first half natively, is packed (with its common properties), runs
 * the second half through the translated send() on the C path and the spike
 * history ring, and is unpacked into the native twin: weight and Kplus after
 * every spike of the second half, and the unpacked twin's status, must equal
 * the native synapse's bit for bit. Then the unpacked twin runs one more
 * spike natively, which needs t_lastspike back as well.
 */
#include <cmath>
#include <cstdio>
#include <vector>

#include "nestcl/model.h"
#include "nestcl_history.h"
#include "nestcl_synapse.h"

#include "probe_node.hpp"
#include "stdp_pl_synapse_hom_syn_glue.hpp"
#include "stdp_synapse_syn_glue.hpp"

using nestcl_test::probe;
using nestcl_test::same;

extern "C" const nestcl_synapse_model nestcl_synapse_stdp_pl_synapse_hom, nestcl_synapse_stdp_synapse;

namespace
{
const double TAU_MINUS = 20.0, DELAY_MS = 1.2;

struct ev
{
  long step;
  bool post;
};

/* A pre/post train with bursts, coincidences and posts at exactly the delay. */
std::vector< ev >
train()
{
  std::vector< ev > e;
  unsigned x = 12345u;
  long t = 10;
  for ( int k = 0; k < 240; ++k )
  {
    x = x * 1103515245u + 12345u;
    t += 1 + ( x >> 16 ) % 60;
    e.push_back( { t, false } );
    if ( ( x >> 8 ) % 3 == 0 )
    {
      e.push_back( { t + ( ( x >> 4 ) % 2 ? 12 : 0 ), true } ); /* post at the pre (after it) or at +delay */
    }
    if ( ( x >> 12 ) % 5 == 0 )
    {
      e.push_back( { t + 3 + ( x >> 20 ) % 40, true } );
    }
  }
  std::stable_sort( e.begin(), e.end(), []( const ev& a, const ev& b ) { return a.step < b.step; } );
  return e;
}

double
status( nest::Dictionary& d, const char* key )
{
  return d.template get< double >( key );
}

template< typename SynT, typename CP >
int
check( const char* what, const nestcl_synapse_model* d, nest::Dictionary params,
  void ( *pack )( const SynT&, const nestcl_synapse_model*, void* ),
  void ( *unpack )( SynT&, const nestcl_synapse_model*, const void* ),
  void ( *pack_cp )( const CP&, const nestcl_synapse_model*, void* ) )
{
  const int fused = nestcl_libm_exp_fused();
  typename SynT::CommonPropertiesType cp;
  nest::ConnectorModel cm;
  cp.set_status( params, cm );
  probe target_a, target_b, source;
  SynT a, b;
  for ( SynT* s : { &a, &b } )
  {
    s->set_status( params, cm );
    s->set_delay_steps( std::lround( DELAY_MS * 10.0 ) );
  }
  a.check_connection( source, target_a, 0, cp );
  b.check_connection( source, target_b, 0, cp );
  const double eps = nest::kernel().connection_manager.get_stdp_eps();
  const double min_delay_ms = nest::Time::delay_steps_to_ms( nest::kernel().connection_manager.get_min_delay() );
  const unsigned cap = 1024;
  std::vector< double > t( cap ), km( cap ), kmt( cap );
  std::vector< nestcl_u32 > access( cap );
  nestcl_u32 head = 0, len = 0, n_inc = 0;
  double Kminus = 0, Kminus_t = 0, last = -1.0, maxd = 0;
  nestcl_history h = { t.data(), km.data(), kmt.data(), access.data(), &head, &len, &Kminus, &Kminus_t, &last, &n_inc,
    &maxd, cap };
  nestcl_hist_register( &h, 0, 0.0 - DELAY_MS, DELAY_MS, eps );
  std::vector< unsigned char > syn( d->syn_size ), cpbuf( d->cp_size + 1 );
  const std::vector< ev > es = train();
  const size_t half = es.size() / 2;
  int bad = 0, compared = 0;
  for ( size_t k = 0; k < es.size(); ++k )
  {
    const nest::Time stamp = nest::Time::step( es[ k ].step );
    if ( k == half )
    {
      pack( b, d, syn.data() );
      pack_cp( cp, d, cpbuf.data() );
    }
    if ( es[ k ].post )
    {
      target_a.spike( stamp );
      target_b.spike( stamp );
      nestcl_hist_set_spiketime( &h, 0, stamp.get_ms(), 1.0 / TAU_MINUS, 1.0 / 110.0, min_delay_ms, eps, fused );
      continue;
    }
    nest::SpikeEvent e;
    e.set_stamp( stamp );
    a.send( e, 0, cp );
    if ( k < half )
    {
      nest::SpikeEvent e2;
      e2.set_stamp( stamp );
      b.send( e2, 0, cp );
      continue;
    }
    nestcl_syn_env env;
    env.hist = &h;
    env.target = 0;
    env.t_spike = stamp.get_ms();
    env.delay_ms = nest::Time::delay_steps_to_ms( std::lround( DELAY_MS * 10.0 ) );
    env.delay_steps = std::lround( DELAY_MS * 10.0 );
    env.rport = 0;
    env.multiplicity = 1;
    env.tau_minus_inv = 1.0 / TAU_MINUS;
    env.eps = eps;
    env.fused = fused;
    double w = 0;
    d->send_cpu( syn.data(), cpbuf.data(), &env, &w );
    nest::Dictionary sa;
    a.get_status( sa );
    double wt = 0, kp = 0;
    d->get_status( syn.data(), cpbuf.data(), "weight", &wt );
    d->get_status( syn.data(), cpbuf.data(), "Kplus", &kp );
    bad += not same( wt, status( sa, "weight" ) ) or not same( kp, status( sa, "Kplus" ) );
    compared++;
  }
  unpack( b, d, syn.data() );
  /* One more spike natively on both: the unpacked twin needs every field back (t_lastspike_ too). */
  const nest::Time more = nest::Time::step( es.back().step + 25 );
  nest::SpikeEvent e1, e2;
  e1.set_stamp( more );
  e2.set_stamp( more );
  a.send( e1, 0, cp );
  b.send( e2, 0, cp );
  nest::Dictionary sa, sb;
  a.get_status( sa );
  b.get_status( sb );
  bad += not same( status( sa, "weight" ), status( sb, "weight" ) )
    or not same( status( sa, "Kplus" ), status( sb, "Kplus" ) );
  std::printf( "%s: %d spikes through the packed struct, then unpacked: weight %.17g vs native %.17g, %s\n", what,
    compared, status( sb, "weight" ), status( sa, "weight" ), bad ? "DIFFERENT" : "equal" );
  return bad != 0;
}

nest::Dictionary
dict( std::initializer_list< std::pair< const char*, double > > kv )
{
  nest::Dictionary d;
  for ( const auto& p : kv )
  {
    d[ p.first ] = p.second;
  }
  return d;
}
}

int
main()
{
  nest::kernel().connection_manager.set_delay_extrema_( 1, 50 );
  if ( nestcl_libm_exp_fused() < 0 )
  {
    std::fprintf( stderr, "FAIL the host's exp is neither of glibc's builds\n" );
    return 1;
  }
  const nest::Dictionary pl =
    dict( { { "weight", 45.0 }, { "alpha", 0.0513 }, { "lambda", 0.1 }, { "mu", 0.4 }, { "tau_plus", 15.0 } } );
  const nest::Dictionary st = dict( { { "weight", 45.0 }, { "lambda", 0.05 }, { "alpha", 1.1 }, { "mu_plus", 0.5 },
    { "mu_minus", 0.7 }, { "Wmax", 100.0 }, { "tau_plus", 15.0 } } );
  using PL_P = nest::stdp_pl_synapse_hom< nest::TargetIdentifierPtrRport >;
  using PL_I = nest::stdp_pl_synapse_hom< nest::TargetIdentifierIndex >;
  using ST_P = nest::stdp_synapse< nest::TargetIdentifierPtrRport >;
  int bad = check< PL_P, nest::STDPPLHomCommonProperties >( "stdp_pl_synapse_hom<TargetIdentifierPtrRport>",
    &nestcl_synapse_stdp_pl_synapse_hom, pl, nestcl_glue::pack_syn_stdp_pl_synapse_hom,
    nestcl_glue::unpack_syn_stdp_pl_synapse_hom, nestcl_glue::pack_cp_stdp_pl_synapse_hom );
  bad |= check< PL_I, nest::STDPPLHomCommonProperties >( "stdp_pl_synapse_hom<TargetIdentifierIndex>",
    &nestcl_synapse_stdp_pl_synapse_hom, pl, nestcl_glue::pack_syn_stdp_pl_synapse_hom,
    nestcl_glue::unpack_syn_stdp_pl_synapse_hom, nestcl_glue::pack_cp_stdp_pl_synapse_hom );
  bad |= check< ST_P, nest::CommonSynapseProperties >( "stdp_synapse<TargetIdentifierPtrRport>",
    &nestcl_synapse_stdp_synapse, st, nestcl_glue::pack_syn_stdp_synapse, nestcl_glue::unpack_syn_stdp_synapse,
    nestcl_glue::pack_cp_stdp_synapse );
  return bad;
}
