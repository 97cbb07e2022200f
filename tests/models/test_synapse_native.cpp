/*
 * Translated synapse models against their C++ originals (the models' headers compiled
 * natively against the shim), bit for bit: for static_synapse, stdp_synapse
 * and stdp_pl_synapse_hom, on the spike trains of tests/unit/history_scenario.h
 * (64 target neurons, 1-12 synapses each with delays of 0.1-5 ms, 3000 pre
 * and post events with bursts, simultaneous pre and post spikes, post spikes
 * exactly one dendritic delay after a pre spike) plus multiplicities 1-3:
 *   - native: the model's send() through a SpikeEvent into a target that
 *     records what its handle() receives (weight times multiplicity), with the
 *     shim's ArchivingNode as the spike history;
 *   - C path: the translated nestcl_syn_<model>_send (the descriptor's
 *     send_cpu) on nestcl_history, glibc's exp and pow in the host's variant;
 *   - OpenCL: the descriptor's device text in a kernel, one work-item per
 *     target neuron replaying its scenario; every value against the C path.
 * After every presynaptic spike the delivered value and every field of the
 * synapse (weight, Kplus, t_lastspike, ...) must be equal. The parameters are
 * hpc_benchmark's for stdp_pl_synapse_hom and a fast-learning set for
 * stdp_synapse, so that weights move far from their start.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C"
{
#include "nestcl/device.h"
#include "nestcl/model.h"
#include "nestcl_history.h"
#include "nestcl_rt_source.h"
#include "nestcl_synapse.h"
}
#include "history_scenario.h"
#include "probe_node.hpp"
#include "static_synapse.h"
#include "stdp_pl_synapse_hom.h"
#include "stdp_synapse.h"

namespace
{
using nestcl_test::probe;
using nestcl_test::same;

/* One value per pre spike: what was delivered, then each synapse field. */
typedef std::vector< double > trace;

const nestcl_synapse_model*
descriptor( const char* name )
{
  for ( int k = 0; k < nestcl_builtin_synapse_count; ++k )
  {
    if ( not std::strcmp( nestcl_builtin_synapses[ k ]->name, name ) )
    {
      return nestcl_builtin_synapses[ k ];
    }
  }
  return nullptr;
}

struct param
{
  const char* name;
  double value;
};

unsigned
multiplicity_of( unsigned i, unsigned e )
{
  nestcl_rng_stream st = nestcl_stream_init( nestcl_rng_key( 78, 2 ), nestcl_rng_counter( i, e ) );
  const unsigned r = nestcl_stream_u32( &st ) % 8;
  return r == 0 ? 2 : r == 1 ? 3 : 1;
}

/* A synapse with the model's defaults and params applied, and the common properties likewise. */
void
make_proto( const nestcl_synapse_model* d, const std::vector< param >& params, std::vector< unsigned char >& proto,
  std::vector< unsigned char >& cp )
{
  proto.assign( d->syn_size, 0 );
  cp.assign( d->cp_size, 0 );
  d->set_defaults( proto.data(), cp.data() );
  for ( const param& p : params )
  {
    if ( d->set_status( proto.data(), cp.data(), p.name, p.value ) )
    {
      std::fprintf( stderr, "FAIL %s: set_status( %s ) refused: %s\n", d->name, p.name, nestcl_last_error() );
      std::exit( 1 );
    }
  }
}

/* The native model: SynT over TargetIdentifierPtrRport with its common properties CpT. */
template< typename SynT >
trace
run_native( const std::vector< scenario >& scs, const std::vector< param >& params, int n_fields_out,
  const nestcl_synapse_model* d )
{
  trace out;
  typename SynT::CommonPropertiesType cp;
  nest::ConnectorModel cm;
  nest::Dictionary dict;
  for ( const param& p : params )
  {
    dict[ p.name ] = p.value;
  }
  cp.set_status( dict, cm );
  for ( unsigned i = 0; i < NEURONS; ++i )
  {
    const scenario& sc = scs[ i ];
    probe target, source;
    std::vector< SynT > syn( sc.n_syn );
    for ( int j = 0; j < sc.n_syn; ++j )
    {
      syn[ j ].set_status( dict, cm );
      syn[ j ].set_delay_steps( std::lround( sc.delay[ j ] * 10.0 ) );
      syn[ j ].check_connection( source, target, 0, cp );
    }
    for ( unsigned e = 0; e < EVENTS; ++e )
    {
      const nest::Time stamp = nest::Time::step( std::lround( sc.e[ e ].t * 10.0 ) );
      const int j = sc.e[ e ].syn;
      if ( j < 0 )
      {
        target.spike( stamp );
        continue;
      }
      nest::SpikeEvent ev;
      ev.set_stamp( stamp );
      ev.set_multiplicity( multiplicity_of( i, e ) );
      target.received = std::nan( "" );
      syn[ j ].send( ev, 0, cp );
      out.push_back( target.received );
      nest::Dictionary st;
      syn[ j ].get_status( st );
      /* the fields through the descriptor's NEST names where get_status shows them */
      for ( int f = 0; f < n_fields_out; ++f )
      {
        const char* nn = d->fields[ f ].nest_name;
        out.push_back( nn and st.known( nn ) ? st.template get< double >( nn ) : 0.0 );
      }
    }
  }
  return out;
}

/* The translated send() on the C path: the same scenario on nestcl_history rings. */
trace
run_c( const std::vector< scenario >& scs, const std::vector< param >& params, int n_fields_out,
  const nestcl_synapse_model* d, int fused )
{
  trace out;
  std::vector< unsigned char > cp, proto;
  make_proto( d, params, proto, cp );
  const double eps = nest::kernel().connection_manager.get_stdp_eps();
  const double min_delay_ms = nest::Time::delay_steps_to_ms( nest::kernel().connection_manager.get_min_delay() );
  const unsigned cap = 4096;
  for ( unsigned i = 0; i < NEURONS; ++i )
  {
    const scenario& sc = scs[ i ];
    std::vector< double > t( cap ), km( cap ), kmt( cap );
    std::vector< nestcl_u32 > access( cap );
    nestcl_u32 head = 0, len = 0, n_inc = 0;
    double Kminus = 0, Kminus_t = 0, last = -1.0, maxd = 0;
    nestcl_history h = { t.data(), km.data(), kmt.data(), access.data(), &head, &len, &Kminus, &Kminus_t, &last, &n_inc,
      &maxd, cap };
    std::vector< std::vector< unsigned char > > syn( sc.n_syn, proto );
    std::vector< double > delay( sc.n_syn );
    for ( int j = 0; j < sc.n_syn; ++j )
    {
      const long steps = std::lround( sc.delay[ j ] * 10.0 );
      delay[ j ] = nest::Time::delay_steps_to_ms( steps );
      if ( d->uses_history )
      {
        nestcl_hist_register( &h, 0, 0.0 - delay[ j ], delay[ j ], eps ); /* t_lastspike starts at 0 */
      }
    }
    for ( unsigned e = 0; e < EVENTS; ++e )
    {
      const nest::Time stamp = nest::Time::step( std::lround( sc.e[ e ].t * 10.0 ) );
      const int j = sc.e[ e ].syn;
      if ( j < 0 )
      {
        if ( nestcl_hist_set_spiketime(
               &h, 0, stamp.get_ms(), 1.0 / TAU_MINUS, TAU_TRIPLET_INV, min_delay_ms, eps, fused ) )
        {
          std::fprintf( stderr, "FAIL history overflow\n" );
          std::exit( 1 );
        }
        continue;
      }
      nestcl_syn_env env;
      env.hist = &h;
      env.target = 0;
      env.t_spike = stamp.get_ms();
      env.delay_ms = delay[ j ];
      env.delay_steps = std::lround( sc.delay[ j ] * 10.0 );
      env.rport = 0;
      env.multiplicity = multiplicity_of( i, e );
      env.tau_minus_inv = 1.0 / TAU_MINUS;
      env.eps = eps;
      env.fused = fused;
      double w = std::nan( "" );
      const int sent = d->send_cpu( syn[ j ].data(), cp.data(), &env, &w );
      out.push_back( sent ? w * static_cast< double >( env.multiplicity ) : std::nan( "" ) );
      for ( int f = 0; f < n_fields_out; ++f )
      {
        double v = 0.0;
        if ( d->fields[ f ].nest_name )
        {
          std::memcpy( &v, syn[ j ].data() + d->fields[ f ].offset, sizeof v );
        }
        out.push_back( v );
      }
    }
  }
  return out;
}

int
compare( const char* what, const trace& a, const trace& b )
{
  if ( a.size() != b.size() )
  {
    std::fprintf( stderr, "FAIL %s: %zu vs %zu values\n", what, a.size(), b.size() );
    return 1;
  }
  size_t diff = 0;
  for ( size_t k = 0; k < a.size(); ++k )
  {
    if ( not same( a[ k ], b[ k ] ) )
    {
      if ( diff < 3 )
      {
        std::fprintf( stderr, "  %s: value %zu: %.17g vs %.17g\n", what, k, a[ k ], b[ k ] );
      }
      ++diff;
    }
  }
  std::printf( "%s: %zu values, %zu differ\n", what, a.size(), diff );
  return diff != 0;
}

/*
 * The OpenCL twin of run_c: one work-item per target neuron replays its
 * scenario through the device's send function; out holds, per pre spike,
 * the delivered value and the synapse's fields, in run_c's order.
 */
const char* kernel_fmt =
  "__kernel void t_syn(__global const double *ev_t, __global const int *ev_syn, __global const int *ev_mult,\n"
  "  __global const double *delay, __global const long *delay_steps, __global const int *n_syn,\n"
  "  __global const uint *out_base, __global double *out, __global double *h_t, __global double *h_km,\n"
  "  __global double *h_kmt, __global uint *h_acc, __global uint *h_head, __global uint *h_len, __global double *h_K,\n"
  "  __global double *h_Kt, __global double *h_last, __global uint *h_ninc, __global double *h_maxd,\n"
  "  __global uchar *syn_mem, __global const uchar *proto, __global const uchar *cp_mem, uint cap, uint events,\n"
  "  uint maxsyn, double eps, double min_delay_ms, double tau_minus_inv, double tau_triplet_inv, int fused,\n"
  "  int uses_history)\n"
  "{\n"
  "  const uint i = get_global_id(0);\n"
  "  nestcl_history h = { h_t, h_km, h_kmt, h_acc, h_head, h_len, h_K, h_Kt, h_last, h_ninc, h_maxd, cap };\n"
  "  %s cp;\n"
  "  for (uint b = 0; b < sizeof cp; ++b) ((uchar *)&cp)[b] = cp_mem[b];\n"
  "  %s syn[12];\n"
  "  for (int j = 0; j < n_syn[i]; ++j) {\n"
  "    for (uint b = 0; b < sizeof syn[j]; ++b) ((uchar *)&syn[j])[b] = proto[b];\n"
  "    if (uses_history) nestcl_hist_register(&h, i, 0.0 - delay[i * maxsyn + j], delay[i * maxsyn + j], eps);\n"
  "  }\n"
  "  uint o = out_base[i];\n"
  "  for (uint e = 0; e < events; ++e) {\n"
  "    const int j = ev_syn[i * events + e];\n"
  "    const double te = ev_t[i * events + e];\n"
  "    if (j < 0) {\n"
  "      nestcl_hist_set_spiketime(&h, i, te, tau_minus_inv, tau_triplet_inv, min_delay_ms, eps, fused);\n"
  "      continue;\n"
  "    }\n"
  "    nestcl_syn_env env;\n"
  "    env.hist = &h; env.target = i; env.t_spike = te; env.delay_ms = delay[i * maxsyn + j];\n"
  "    env.delay_steps = delay_steps[i * maxsyn + j]; env.rport = 0; env.multiplicity = ev_mult[i * events + e];\n"
  "    env.tau_minus_inv = tau_minus_inv; env.eps = eps; env.fused = fused;\n"
  "    double w = 0.0;\n"
  "    const int sent = %s(&syn[j], &cp, &env, &w);\n"
  "    out[o++] = sent ? w * (double)env.multiplicity : NAN;\n"
  "%s"
  "  }\n"
  "}\n";

int
run_opencl( const std::vector< scenario >& scs, const std::vector< param >& params, int n_fields_out,
  const nestcl_synapse_model* d, int fused, const trace& c_trace )
{
  nestcl_device* dev;
  if ( nestcl_device_open( nullptr, 1, &dev ) != 0 )
  {
    std::printf( "no OpenCL device (%s): the device comparison is skipped\n", nestcl_last_error() );
    return 0;
  }
  std::string fields;
  for ( int f = 0; f < n_fields_out; ++f )
  {
    fields += d->fields[ f ].nest_name ? "    out[o++] = syn[j]." + std::string( d->fields[ f ].member ) + ";\n"
                                       : "    out[o++] = 0.0;\n";
  }
  const std::string sname = std::string( "nestcl_syn_" ) + d->name, cpname = std::string( "nestcl_syncp_" ) + d->name;
  std::vector< char > kt( std::strlen( kernel_fmt ) + fields.size() + 512 );
  std::snprintf( kt.data(), kt.size(), kernel_fmt, cpname.c_str(), sname.c_str(), d->send_name, fields.c_str() );
  const std::string src = std::string( nestcl_rt_source ) + "\n" + d->device_source + "\n" + kt.data();
  cl_program prog;
  if ( nestcl_program_build( dev, src.c_str(), "", &prog ) != 0 )
  {
    std::fprintf( stderr, "FAIL %s: device build: %s\n", d->name, nestcl_last_error() );
    return 1;
  }
  const unsigned cap = 4096, n = NEURONS;
  std::vector< double > ev_t( n * EVENTS ), delay( n * MAXSYN );
  std::vector< int > ev_syn( n * EVENTS ), ev_mult( n * EVENTS ), n_syn( n );
  std::vector< long > delay_steps( n * MAXSYN );
  std::vector< unsigned > out_base( n );
  unsigned total = 0;
  for ( unsigned i = 0; i < n; ++i )
  {
    n_syn[ i ] = scs[ i ].n_syn;
    for ( int j = 0; j < scs[ i ].n_syn; ++j )
    {
      delay_steps[ i * MAXSYN + j ] = std::lround( scs[ i ].delay[ j ] * 10.0 );
      delay[ i * MAXSYN + j ] = nest::Time::delay_steps_to_ms( delay_steps[ i * MAXSYN + j ] );
    }
    out_base[ i ] = total;
    for ( unsigned e = 0; e < EVENTS; ++e )
    {
      const nest::Time stamp = nest::Time::step( std::lround( scs[ i ].e[ e ].t * 10.0 ) );
      ev_t[ i * EVENTS + e ] = stamp.get_ms();
      ev_syn[ i * EVENTS + e ] = scs[ i ].e[ e ].syn;
      ev_mult[ i * EVENTS + e ] = static_cast< int >( multiplicity_of( i, e ) );
      total += scs[ i ].e[ e ].syn >= 0 ? 1 + n_fields_out : 0;
    }
  }
  std::vector< unsigned char > cp, proto;
  make_proto( d, params, proto, cp );
  std::vector< double > zeros_d( static_cast< size_t >( n ) * cap ), out( total ), minus1( n, -1.0 ), zn( n );
  std::vector< unsigned > zeros_u( static_cast< size_t >( n ) * cap ), zun( n );
  struct buf
  {
    const void* host;
    size_t bytes;
    nestcl_buffer b = {};
  };
  std::vector< buf > bufs = { { ev_t.data(), ev_t.size() * 8 }, { ev_syn.data(), ev_syn.size() * 4 },
    { ev_mult.data(), ev_mult.size() * 4 }, { delay.data(), delay.size() * 8 },
    { delay_steps.data(), delay_steps.size() * 8 }, { n_syn.data(), n_syn.size() * 4 },
    { out_base.data(), out_base.size() * 4 }, { out.data(), out.size() * 8 }, { zeros_d.data(), zeros_d.size() * 8 },
    { zeros_d.data(), zeros_d.size() * 8 }, { zeros_d.data(), zeros_d.size() * 8 },
    { zeros_u.data(), zeros_u.size() * 4 }, { zun.data(), n * 4 }, { zun.data(), n * 4 }, { zn.data(), n * 8 },
    { zn.data(), n * 8 }, { minus1.data(), n * 8 }, { zun.data(), n * 4 }, { zn.data(), n * 8 },
    { nullptr, static_cast< size_t >( n ) * 12 * d->syn_size }, { proto.data(), proto.size() },
    { cp.data(), cp.size() } };
  cl_int err;
  cl_kernel k = clCreateKernel( prog, "t_syn", &err );
  int arg = 0;
  for ( buf& b : bufs )
  {
    if ( nestcl_buffer_alloc( dev, NESTCL_MEM_OTHER, "t", b.bytes ? b.bytes : 8,
           CL_MEM_READ_WRITE | ( b.host ? CL_MEM_COPY_HOST_PTR : 0 ), const_cast< void* >( b.host ), &b.b ) )
    {
      std::fprintf( stderr, "FAIL buffer: %s\n", nestcl_last_error() );
      return 1;
    }
    err |= clSetKernelArg( k, arg++, sizeof( cl_mem ), &b.b.mem );
  }
  const cl_uint ucap = cap, uev = EVENTS, umax = MAXSYN;
  const double min_delay_ms = nest::Time::delay_steps_to_ms( nest::kernel().connection_manager.get_min_delay() );
  const double eps = nest::kernel().connection_manager.get_stdp_eps(), tmi = 1.0 / TAU_MINUS, tti = TAU_TRIPLET_INV;
  const cl_int cf = fused, uh = d->uses_history;
  err |= clSetKernelArg( k, arg++, sizeof ucap, &ucap );
  err |= clSetKernelArg( k, arg++, sizeof uev, &uev );
  err |= clSetKernelArg( k, arg++, sizeof umax, &umax );
  err |= clSetKernelArg( k, arg++, sizeof eps, &eps );
  err |= clSetKernelArg( k, arg++, sizeof min_delay_ms, &min_delay_ms );
  err |= clSetKernelArg( k, arg++, sizeof tmi, &tmi );
  err |= clSetKernelArg( k, arg++, sizeof tti, &tti );
  err |= clSetKernelArg( k, arg++, sizeof cf, &cf );
  err |= clSetKernelArg( k, arg++, sizeof uh, &uh );
  const size_t global = n;
  cl_command_queue q = nestcl_device_queue( dev, 0 );
  err |= clEnqueueNDRangeKernel( q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr );
  err |= clEnqueueReadBuffer( q, bufs[ 7 ].b.mem, CL_TRUE, 0, out.size() * 8, out.data(), 0, nullptr, nullptr );
  if ( err != CL_SUCCESS )
  {
    std::fprintf( stderr, "FAIL running the kernel (%d)\n", err );
    return 1;
  }
  for ( buf& b : bufs )
  {
    nestcl_buffer_free( dev, &b.b );
  }
  clReleaseKernel( k );
  clReleaseProgram( prog );
  const std::string what =
    std::string( d->name ) + ": OpenCL (" + nestcl_device_get_info( dev )->device_name + ") vs C";
  nestcl_device_close( dev );
  return compare( what.c_str(), out, c_trace );
}

template< typename SynT >
int
check_model( const char* name, const std::vector< scenario >& scs, const std::vector< param >& params, int fused )
{
  const nestcl_synapse_model* d = descriptor( name );
  if ( not d )
  {
    std::fprintf( stderr, "FAIL %s is not among the translated synapse models\n", name );
    return 1;
  }
  const int nf = d->n_syn_fields;
  const trace native = run_native< SynT >( scs, params, nf, d );
  const trace c = run_c( scs, params, nf, d, fused );
  int bad = compare( ( std::string( name ) + ": C path vs native" ).c_str(), c, native );
  /* the weights must have moved: a test of plasticity, not of copying */
  double lo = 1e300, hi = -1e300;
  for ( size_t k = 1; k < native.size(); k += 1 + nf )
  {
    lo = std::min( lo, native[ k ] );
    hi = std::max( hi, native[ k ] );
  }
  std::printf( "%s: weights after pre spikes in [%g, %g]\n", name, lo, hi );
  if ( d->uses_history and not( hi - lo > 1.0 ) )
  {
    std::fprintf( stderr, "FAIL %s: the weights hardly moved\n", name );
    bad = 1;
  }
  return bad + run_opencl( scs, params, nf, d, fused, c );
}
}

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
  std::vector< scenario > scs( NEURONS );
  for ( unsigned i = 0; i < NEURONS; ++i )
  {
    make_scenario( i, &scs[ i ] );
  }
  int bad = 0;
  bad += check_model< nest::static_synapse< nest::TargetIdentifierPtrRport > >(
    "static_synapse", scs, { { "weight", 2.5 } }, fused );
  bad += check_model< nest::stdp_pl_synapse_hom< nest::TargetIdentifierPtrRport > >( "stdp_pl_synapse_hom", scs,
    { { "weight", 45.0 }, { "alpha", 0.0513 }, { "lambda", 0.1 }, { "mu", 0.4 }, { "tau_plus", 15.0 } }, fused );
  bad += check_model< nest::stdp_synapse< nest::TargetIdentifierIndex > >( "stdp_synapse", scs,
    { { "weight", 45.0 }, { "lambda", 0.05 }, { "alpha", 1.1 }, { "mu_plus", 0.5 }, { "mu_minus", 0.7 },
      { "Wmax", 100.0 }, { "tau_plus", 15.0 } },
    fused );
  if ( bad )
  {
    std::fprintf( stderr, "FAIL\n" );
    return 1;
  }
  return 0;
}
