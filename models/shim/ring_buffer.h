/*
 * nestcl's NEST-API shim: NEST's input ring buffers. Both have min_delay +
 * max_delay slots; a slot holds the input due at one step.
 *   RingBuffer: add_value(offs, v) adds v to the slot of offset offs from the
 *     slice origin; get_value(lag) returns that slot's sum and zeroes it.
 *   MultiChannelInputBuffer<N>: the same with N channels per slot; a model
 *     reads all channels of a slot by reference and then resets the slot.
 * The translator maps these onto the device ring (nestcl_ring_*).
 */
#ifndef RING_BUFFER_H
#define RING_BUFFER_H

#include <array>
#include <cstddef>
#include <vector>

#include "kernel_manager.h"

namespace nest
{
class RingBuffer
{
public:
  RingBuffer()
    : buffer_( kernel().connection_manager.get_min_delay() + kernel().connection_manager.get_max_delay(), 0.0 )
  {
  }

  void
  add_value( const long offs, const double v )
  {
    buffer_[ get_index_( offs ) ] += v;
  }

  void
  set_value( const long offs, const double v )
  {
    buffer_[ get_index_( offs ) ] = v;
  }

  double
  get_value( const long offs )
  {
    const size_t idx = get_index_( offs );
    const double v = buffer_[ idx ];
    buffer_[ idx ] = 0.0;
    return v;
  }

  void
  clear()
  {
    resize();
    for ( double& x : buffer_ )
    {
      x = 0.0;
    }
  }

  void
  resize()
  {
    const size_t size = kernel().connection_manager.get_min_delay() + kernel().connection_manager.get_max_delay();
    if ( buffer_.size() != size )
    {
      buffer_.resize( size );
    }
  }

  size_t
  size() const
  {
    return buffer_.size();
  }

private:
  size_t
  get_index_( const long d ) const
  {
    return static_cast< size_t >( kernel().event_delivery_manager.get_modulo( d ) );
  }

  std::vector< double > buffer_;
};

template < unsigned int num_channels >
class MultiChannelInputBuffer
{
public:
  MultiChannelInputBuffer()
    : buffer_( kernel().connection_manager.get_min_delay() + kernel().connection_manager.get_max_delay(),
      std::array< double, num_channels >() )
  {
    clear();
  }

  void
  add_value( const size_t slot, const size_t channel, const double value )
  {
    buffer_[ slot ][ channel ] += value;
  }

  std::array< double, num_channels >&
  get_values_all_channels( const size_t slot )
  {
    return buffer_[ slot ];
  }

  void
  reset_values_all_channels( const size_t slot )
  {
    buffer_[ slot ].fill( 0.0 );
  }

  void
  clear()
  {
    resize();
    for ( auto& slot : buffer_ )
    {
      slot.fill( 0.0 );
    }
  }

  void
  resize()
  {
    const size_t size = kernel().connection_manager.get_min_delay() + kernel().connection_manager.get_max_delay();
    if ( buffer_.size() != size )
    {
      buffer_.resize( size, std::array< double, num_channels >() );
    }
  }

  size_t
  size() const
  {
    return buffer_.size();
  }

private:
  std::vector< std::array< double, num_channels > > buffer_;
};
}  // namespace nest

#endif
