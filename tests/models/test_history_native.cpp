/*
 * The device's spike history (kernels_templates/nestcl_history.h, its C path)
 * against the shim's ArchivingNode (models/shim/archiving_node.h, NEST's
 * semantics in C++ with std::deque and std::exp), on the spike trains of
 * tests/unit/history_scenario.h with times and delays as NEST forms them
 * (Time::step(...).get_ms(), Time::delay_steps_to_ms): every window (its
 * entries' t and Kminus), every K value and every trace equal bit for bit,
 * nestcl_history using glibc's exp in the variant the host runs. This ties
 * the ring to the native reference that translated STDP synapses will be
 * compared with.
 */
#include <cstdio>
#include <cstring>
#include <vector>

extern "C"
{
#include "nestcl_history.h"
}
#include "history_scenario.h"
#include "probe_node.hpp"

using nestcl_test::probe;
using nestcl_test::same;

int
main()
{
  nest::kernel().connection_manager.set_delay_extrema_( 1, 50 );  // min_delay 0.1 ms at h = 0.1 ms
  const int fused = nestcl_libm_exp_fused();
  if ( fused < 0 )
  {
    std::fprintf( stderr, "FAIL the host's exp is neither of glibc's builds\n" );
    return 1;
  }
  const double eps = nest::kernel().connection_manager.get_stdp_eps();
  const double min_delay_ms = nest::Time::delay_steps_to_ms( nest::kernel().connection_manager.get_min_delay() );
  const unsigned cap = 4096;
  long compared = 0, nonempty = 0, bad = 0;
  std::vector< scenario > scs( NEURONS );
  for ( unsigned i = 0; i < NEURONS; ++i )
  {
    make_scenario( i, &scs[ i ] );
    const scenario& sc = scs[ i ];
    probe ref;
    // The ring of one neuron.
    std::vector< double > t( cap ), km( cap ), kmt( cap );
    std::vector< nestcl_u32 > access( cap );
    nestcl_u32 head = 0, len = 0, n_inc = 0;
    double Kminus = 0, Kminus_t = 0, last = -1.0, maxd = 0;
    nestcl_history h = { t.data(), km.data(), kmt.data(), access.data(), &head, &len, &Kminus, &Kminus_t, &last, &n_inc,
      &maxd, cap };
    double delay[ MAXSYN ], t_last[ MAXSYN ];
    for ( int j = 0; j < sc.n_syn; ++j )
    {
      delay[ j ] = nest::Time::delay_steps_to_ms( std::lround( sc.delay[ j ] * 10.0 ) );
      t_last[ j ] = 0.0;
      ref.register_stdp_connection( t_last[ j ] - delay[ j ], delay[ j ] );
      nestcl_hist_register( &h, 0, t_last[ j ] - delay[ j ], delay[ j ], eps );
    }
    for ( unsigned e = 0; e < EVENTS; ++e )
    {
      const nest::Time stamp = nest::Time::step( std::lround( sc.e[ e ].t * 10.0 ) );
      const double te = stamp.get_ms();
      const int j = sc.e[ e ].syn;
      if ( j < 0 )
      {
        ref.spike( stamp );
        if ( nestcl_hist_set_spiketime( &h, 0, te, ref.get_tau_minus_inv(), 1.0 / 110.0, min_delay_ms, eps, fused ) )
        {
          std::fprintf( stderr, "FAIL neuron %u: ring of %u entries overflowed\n", i, cap );
          return 1;
        }
        bad += not same( ref.get_spiketime_ms(), last );
        continue;
      }
      std::deque< nest::histentry >::iterator start, finish;
      ref.get_history( t_last[ j ] - delay[ j ], te - delay[ j ], &start, &finish );
      nestcl_u32 a, b;
      nestcl_hist_get_history( &h, 0, t_last[ j ] - delay[ j ], te - delay[ j ], eps, &a, &b );
      if ( static_cast< long >( b - a ) != std::distance( start, finish ) )
      {
        ++bad;
      }
      else
      {
        for ( nestcl_u32 k = a; k < b; ++k, ++start )
        {
          bad += not same( start->t_, nestcl_hist_t( &h, 0, k ) )
            or not same( start->Kminus_, nestcl_hist_kminus( &h, 0, k ) );
        }
      }
      nonempty += b > a;
      const double kn = ref.get_K_value( te - delay[ j ] );
      const double kr = nestcl_hist_get_K_value( &h, 0, te - delay[ j ], ref.get_tau_minus_inv(), eps, fused );
      bad += not same( kn, kr );
      t_last[ j ] = te;
      ++compared;
    }
  }
  std::printf( "%u neurons: %ld pre spikes (%ld non-empty windows), glibc's %s exp: %s\n", NEURONS, compared, nonempty,
    fused ? "FMA" : "plain", bad ? "DIFFERS from the shim's ArchivingNode" : "ring == ArchivingNode, bit for bit" );
  if ( bad or nonempty < 1000 )
  {
    std::fprintf( stderr, "FAIL %ld differences, %ld non-empty windows\n", bad, nonempty );
    return 1;
  }
  return 0;
}
