/*
 * The device rows of a stream thread's connectors, as the synapse exports and
 * imports walk them (nestcl_synapse_export.cpp, nestcl_plastic_export.cpp):
 * a connector's runs (one source's connections, which NEST keeps together),
 * each in a device row; the rows split among NEST's threads, so that each
 * thread owns a range of rows and writes only their synapses; and the rows cut
 * into chunks whose synapses fit a bounded staging buffer, so that no host copy
 * of all the exported synapses exists beside NEST's connectors.
 */
#ifndef NESTCL_ROWS_H
#define NESTCL_ROWS_H

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "connection.h"
#include "kernel_manager.h"
#include "target_identifier.h"
#include "nestcl/nestcl_manager_impl.h"

#ifdef HAVE_NESTCL
namespace nest
{
/*
 * Staging of one chunk: at most this many bytes of synapses (docs/using-with-nest.md, "How it works"). Each chunk
 * costs a map and a wait per device buffer: with 4 MiB, hpc_benchmark at scale 1 wrote about 2,000 of them, and
 * the upload took 3.6-4.1 s of its 6.5-6.9 s export; with 64 MiB 2.6-3.1 s (2026-12-08, PoCL, 2 cores).
 */
const uint64_t CHUNK_BYTES = 64ull << 20;

/*
 * One chunk's staging of T: grows to the largest chunk and is reused, never
 * filled with zeros (the walk writes every element it hands on, and the
 * first write of fresh memory is what costs on a large export).
 */
template< typename T >
struct StagingArray
{
  std::unique_ptr< T[] > at;
  size_t cap = 0;
  void
  grow( size_t n )
  {
    if ( n > cap )
    {
      at.reset( new T[ n ] );
      cap = n;
    }
  }
  T&
  operator[]( size_t i )
  {
    return at[ i ];
  }
  T*
  data()
  {
    return at.get();
  }
};

/*
 * A connection of a synapse model that stays with NEST where the export finds
 * it does not fit the device (its second pass checks what the first did not):
 * the export is made again without that model.
 */
struct Refused
{
  synindex syn_id;
};

/* NEST's "hpc" connections keep their target's thread-local index (nestcl_rows.cpp: private members). */
extern TargetIdentifierIndex Connection< TargetIdentifierIndex >::*const index_target;
extern targetindex TargetIdentifierIndex::*const index_value;

/*
 * The thread-local index of connection c's target on thread tid: read from
 * the connection where it keeps it, else from the target node; false when the
 * target lives on another thread.
 */
template< typename C >
inline bool
target_lid( const C& c, size_t tid, size_t& lid )
{
  if constexpr ( std::is_base_of_v< Connection< TargetIdentifierIndex >, C > )
  {
    lid = ( c.*index_target ).*index_value;
    return true;
  }
  else
  {
    const Node* t = c.get_target( tid );
    lid = t->get_thread_lid();
    return t->get_thread() == tid;
  }
}

/*
 * The runs of one connector on a thread: run k is the lcids [starts[k],
 * starts[k + 1]) of one source (starts has one more entry: the connector's
 * size), in device row row_of[k].
 */
struct Runs
{
  std::vector< size_t > starts;
  std::vector< uint32_t > row_of;
  std::vector< uint32_t > by_row;  // the runs in the order of their rows (order())

  size_t
  size() const
  {
    return row_of.size();
  }
  void
  order()
  {
    by_row.resize( row_of.size() );
    for ( uint32_t k = 0; k < by_row.size(); ++k )
    {
      by_row[ k ] = k;
    }
    std::stable_sort(
      by_row.begin(), by_row.end(), [ this ]( uint32_t p, uint32_t q ) { return row_of[ p ] < row_of[ q ]; } );
  }
  /* f( k ) for every run k whose row lies in [a, b), in row order (order() first). */
  template< typename F >
  void
  in_rows( uint32_t a, uint32_t b, F f ) const
  {
    auto at = std::lower_bound(
      by_row.begin(), by_row.end(), a, [ this ]( uint32_t k, uint32_t row ) { return row_of[ k ] < row; } );
    for ( ; at != by_row.end() and row_of[ *at ] < b; ++at )
    {
      f( *at );
    }
  }
};

/*
 * The first lcid of each run of items (NEST marks each connection whose
 * source has more connections after it), scanned in parallel; with the end.
 */
template< typename Items >
std::vector< size_t >
scan_runs( const Items& items )
{
  const size_t n = items.size(), parts = std::max< size_t >( 1, kernel().vp_manager.get_num_threads() );
  std::vector< std::vector< size_t > > found( parts );
#pragma omp parallel for schedule( static, 1 )
  for ( size_t q = 0; q < parts; ++q )
  {
    for ( size_t lcid = n * q / parts; lcid < n * ( q + 1 ) / parts; ++lcid )
    {
      if ( lcid == 0 or not items[ lcid - 1 ].source_has_more_targets() )
      {
        found[ q ].push_back( lcid );
      }
    }
  }
  std::vector< size_t > starts;
  for ( const std::vector< size_t >& f : found )
  {
    starts.insert( starts.end(), f.begin(), f.end() );
  }
  starts.push_back( n );
  return starts;
}

/*
 * The runs of connector syn_id of thread tid and their device rows: from the
 * loop ids where the device loop may run (a source's loop id is its row), else
 * from NEST's marks of a source's next connection (rows base, base + 1, ...).
 */
template< typename Items >
Runs
runs_of( size_t syn_id, const Items& items, uint32_t base, const LoopIds& ids )
{
  Runs r;
  if ( ids.of.empty() )
  {
    r.starts = scan_runs( items );
    for ( size_t k = 0; k + 1 < r.starts.size(); ++k )
    {
      r.row_of.push_back( base + static_cast< uint32_t >( k ) );
    }
    return r;
  }
  for ( auto at = ids.of.lower_bound( std::make_pair( syn_id, size_t( 0 ) ) );
        at != ids.of.end() and at->first.first == syn_id; ++at )
  {
    r.starts.push_back( at->first.second );
    r.row_of.push_back( at->second );
  }
  r.starts.push_back( items.size() );
  return r;
}

/*
 * Rows [a, b) split into one range per NEST thread; f( a_t, b_t ) for each,
 * in parallel. An exception of f (which must not leave a parallel region)
 * is thrown again after it: the first one.
 */
template< typename F >
void
for_row_parts( uint32_t a, uint32_t b, F f )
{
  const size_t parts = std::max< size_t >( 1, kernel().vp_manager.get_num_threads() );
  std::vector< std::exception_ptr > failed( parts );
#pragma omp parallel for schedule( static, 1 )
  for ( size_t q = 0; q < parts; ++q )
  {
    try
    {
      f( static_cast< uint32_t >( a + ( b - a ) * q / parts ),
        static_cast< uint32_t >( a + ( b - a ) * ( q + 1 ) / parts ) );
    }
    catch ( ... )
    {
      failed[ q ] = std::current_exception();
    }
  }
  for ( const std::exception_ptr& e : failed )
  {
    if ( e )
    {
      std::rethrow_exception( e );
    }
  }
}

/* row_ptr (rows + 1 entries) from per-row counts. */
inline std::vector< uint64_t >
row_pointers( const std::vector< uint64_t >& count )
{
  std::vector< uint64_t > ptr( count.size() + 1, 0 );
  for ( size_t r = 0; r < count.size(); ++r )
  {
    ptr[ r + 1 ] = ptr[ r ] + count[ r ];
  }
  return ptr;
}

/*
 * Chunks [r0, r1) of n rows whose synapses, over every group's rows (row_ptr
 * per group), take at most CHUNK_BYTES at bytes_per_synapse each; a row
 * larger than that is a chunk of its own.
 */
inline std::vector< std::pair< uint32_t, uint32_t > >
row_chunks( const std::vector< std::vector< uint64_t > >& row_ptr, uint32_t n, uint64_t bytes_per_synapse )
{
  const uint64_t budget = std::max< uint64_t >( 1, CHUNK_BYTES / std::max< uint64_t >( 1, bytes_per_synapse ) );
  std::vector< std::pair< uint32_t, uint32_t > > chunks;
  uint32_t r0 = 0;
  uint64_t in = 0;
  for ( uint32_t r = 0; r < n; ++r )
  {
    uint64_t row = 0;
    for ( const std::vector< uint64_t >& p : row_ptr )
    {
      row += p[ r + 1 ] - p[ r ];
    }
    if ( r > r0 and in + row > budget )
    {
      chunks.emplace_back( r0, r );
      r0 = r;
      in = 0;
    }
    in += row;
  }
  if ( n > r0 )
  {
    chunks.emplace_back( r0, n );
  }
  return chunks;
}
}
#endif

#endif
