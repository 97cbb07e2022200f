/*
 * NEST's SliceRingBuffer API for the shim: the queue of precise spikes of the
 * *_ps models. handle() queues each spike with its delivery step (stamp), its
 * offset within that step and its weight; update() calls prepare_delivery()
 * at the first lag of a slice and then takes the events of each step with
 * get_next_spike(), earliest first (the largest offset, since offsets count
 * back from the end of the step); add_refractory() inserts the pseudo-event
 * that ends a refractory period, which goes first when it is not later than
 * the next spike. Written for nestcl from NEST's documented semantics: one
 * queue per slice of the ring (min_delay + max_delay, in slices of min_delay).
 */
#ifndef SLICE_RING_BUFFER_H
#define SLICE_RING_BUFFER_H

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "kernel_manager.h"

namespace nest
{
class SliceRingBuffer
{
public:
  SliceRingBuffer()
    : refract_( std::numeric_limits< long >::max(), 0.0, 0.0 )
  {
  }

  void
  add_spike( const long rel_delivery, const long stamp, const double ps_offset, const double weight )
  {
    queue_[ kernel().event_delivery_manager.get_slice_modulo( rel_delivery ) ].push_back(
      SpikeInfo( stamp, ps_offset, weight ) );
  }

  void
  add_refractory( const long stamp, const double ps_offset )
  {
    refract_.stamp_ = stamp;
    refract_.ps_offset_ = ps_offset;
  }

  void
  prepare_delivery()
  {
    deliver_ = &queue_[ kernel().event_delivery_manager.get_slice_modulo( 0 ) ];
    // earliest event last: pop_back() hands them out in time order
    std::sort( deliver_->begin(), deliver_->end(), []( const SpikeInfo& a, const SpikeInfo& b ) { return later( a, b ); } );
  }

  void
  discard_events()
  {
    deliver_ = &queue_[ kernel().event_delivery_manager.get_slice_modulo( 0 ) ];
    deliver_->clear();
  }

  bool
  get_next_spike( const long req_stamp, bool accumulate_simultaneous, double& ps_offset, double& weight,
    bool& end_of_refract )
  {
    end_of_refract = false;
    if ( deliver_->empty() or not later( refract_, deliver_->back() ) )
    {
      if ( refract_.stamp_ != req_stamp )
      {
        return false;
      }
      ps_offset = refract_.ps_offset_;
      weight = 0.0;
      end_of_refract = true;
      refract_.stamp_ = std::numeric_limits< long >::max();
      return true;
    }
    if ( deliver_->back().stamp_ != req_stamp )
    {
      return false;
    }
    ps_offset = deliver_->back().ps_offset_;
    weight = deliver_->back().weight_;
    deliver_->pop_back();
    while ( accumulate_simultaneous and not deliver_->empty() and deliver_->back().ps_offset_ == ps_offset
      and deliver_->back().stamp_ == req_stamp )
    {
      weight += deliver_->back().weight_;
      deliver_->pop_back();
    }
    return true;
  }

  void
  clear()
  {
    for ( auto& q : queue_ )
    {
      q.clear();
    }
  }

  void
  resize()
  {
    const long md = kernel().connection_manager.get_min_delay();
    const long slices = static_cast< long >(
      std::ceil( static_cast< double >( md + kernel().connection_manager.get_max_delay() ) / md ) );
    if ( static_cast< long >( queue_.size() ) != slices )
    {
      queue_.resize( slices );
      clear();
    }
  }

private:
  struct SpikeInfo
  {
    SpikeInfo( long stamp, double ps_offset, double weight )
      : stamp_( stamp )
      , ps_offset_( ps_offset )
      , weight_( weight )
    {
    }
    long stamp_;
    double ps_offset_;
    double weight_;
  };

  // a is later than b: a later step, or the same step and a smaller offset
  static bool
  later( const SpikeInfo& a, const SpikeInfo& b )
  {
    return a.stamp_ == b.stamp_ ? a.ps_offset_ < b.ps_offset_ : a.stamp_ > b.stamp_;
  }

  std::vector< std::vector< SpikeInfo > > queue_;
  std::vector< SpikeInfo >* deliver_ = nullptr;
  SpikeInfo refract_;
};
}

#endif
