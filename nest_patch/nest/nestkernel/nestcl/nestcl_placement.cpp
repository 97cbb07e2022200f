/*
 * nestcl inside NEST (nest_patch): weighted node placement (nestcl_placement.h).
 */
#include "nestcl/nestcl_placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "exceptions.h"

namespace nest
{
namespace nestcl_placement
{
bool active = false;
void ( *before_create )( size_t ) = nullptr;

namespace
{
/* One Create of neurons: VP v holds ids [b[v], b[v + 1]), with local ids from cum[v] on. */
struct Range
{
  size_t min_id, max_id;
  std::vector< size_t > b, cum;
};

std::vector< double > weights_;
std::vector< Range > ranges_;  // by increasing ids
std::vector< size_t > count_;  // neurons per VP so far
size_t max_count_ = 0;

const Range*
find( size_t id )
{
  auto it =
    std::upper_bound( ranges_.begin(), ranges_.end(), id, []( size_t x, const Range& r ) { return x < r.min_id; } );
  if ( it == ranges_.begin() )
  {
    return nullptr;
  }
  --it;
  return id <= it->max_id ? &*it : nullptr;
}

size_t
vp_in( const Range& r, size_t id )
{
  // the last v with b[v] <= id (empty blocks share their b with the next one)
  return static_cast< size_t >( std::upper_bound( r.b.begin(), r.b.end(), id ) - r.b.begin() ) - 1;
}
}

void
start( const std::vector< double >& weights )
{
  clear();
  weights_ = weights;
  count_.assign( weights.size(), 0 );
  active = true;
}

void
clear()
{
  active = false;
  weights_.clear();
  ranges_.clear();
  count_.clear();
  max_count_ = 0;
}

void
add_range( size_t min_id, size_t max_id )
{
  if ( before_create )
  {
    before_create( max_id - min_id + 1 );
  }
  if ( not active )
  {
    return;
  }
  const size_t V = weights_.size();
  const size_t n = max_id - min_id + 1;
  // Block sizes by largest remainder: floor(n w_v), then one more for the largest fractional parts.
  std::vector< size_t > size( V );
  std::vector< std::pair< double, size_t > > rest( V );
  size_t given = 0;
  for ( size_t v = 0; v < V; ++v )
  {
    const double exact = static_cast< double >( n ) * weights_[ v ];
    size[ v ] = static_cast< size_t >( std::floor( exact ) );
    given += size[ v ];
    rest[ v ] = std::make_pair( -( exact - std::floor( exact ) ), v );  // largest first, then lowest VP
  }
  std::sort( rest.begin(), rest.end() );
  for ( size_t k = 0; given < n; ++k, ++given )
  {
    ++size[ rest[ k % V ].second ];
  }
  Range r;
  r.min_id = min_id;
  r.max_id = max_id;
  r.b.assign( V + 1, min_id );
  r.cum = count_;
  for ( size_t v = 0; v < V; ++v )
  {
    r.b[ v + 1 ] = r.b[ v ] + size[ v ];
    count_[ v ] += size[ v ];
    max_count_ = std::max( max_count_, count_[ v ] );
  }
  ranges_.push_back( std::move( r ) );
}

size_t
vp_of( size_t node_id, size_t num_vps )
{
  const Range* r = find( node_id );
  return r ? vp_in( *r, node_id ) : node_id % num_vps;
}

size_t
lid_of( size_t node_id, size_t num_vps )
{
  const Range* r = find( node_id );
  if ( r )
  {
    const size_t v = vp_in( *r, node_id );
    return r->cum[ v ] + ( node_id - r->b[ v ] );
  }
  // Round-robin ids (devices) after every VP's neurons.
  return max_count_ + static_cast< size_t >( std::ceil( static_cast< double >( node_id ) / num_vps ) ) - 1;
}

size_t
node_id_of( size_t vp, size_t lid, size_t num_vps )
{
  if ( vp < count_.size() and lid < count_[ vp ] )
  {
    // The last Create whose block on vp starts at or before lid holds it (cum is non-decreasing).
    auto it = std::upper_bound(
      ranges_.begin(), ranges_.end(), lid, [ vp ]( size_t x, const Range& r ) { return x < r.cum[ vp ]; } );
    --it;
    return it->b[ vp ] + ( lid - it->cum[ vp ] );
  }
  return ( lid - max_count_ + static_cast< size_t >( vp == 0 ) ) * num_vps + vp;
}

size_t
max_local( size_t num_nodes, size_t num_vps )
{
  return max_count_ + static_cast< size_t >( std::ceil( static_cast< double >( num_nodes ) / num_vps ) );
}

size_t
first( size_t vp, size_t min_id )
{
  const Range* r = find( min_id );
  return r ? r->b[ vp ] : min_id;
}

size_t
last( size_t vp, size_t min_id )
{
  const Range* r = find( min_id );
  return r ? r->b[ vp + 1 ] - 1 : min_id - 1;
}

double
share( size_t vp, size_t num_vps )
{
  return active and vp < weights_.size() ? weights_[ vp ] : 1.0 / static_cast< double >( num_vps );
}

void
refuse_thread_local()
{
  if ( active )
  {
    throw KernelException(
      "nestcl: this operation iterates over a VP's nodes assuming NEST's round-robin placement "
      "(spatial or tripartite connection rules), which nestcl_gpu_fraction other than the even "
      "split replaces by weighted blocks; use nestcl_gpu_fraction \"auto\" for this network" );
  }
}
}
}
