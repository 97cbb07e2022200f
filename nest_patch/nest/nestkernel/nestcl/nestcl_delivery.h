/*
 * The spikes a stream VP receives from NEST in a slice (nestcl_delivery.cpp),
 * collected per thread as device rows and lags before they go to its blocks.
 */
#ifndef NESTCL_DELIVERY_H
#define NESTCL_DELIVERY_H

#include "nestcl/nestcl_manager_types.h"

namespace nest
{
struct DeliveryState
{
#ifdef HAVE_NESTCL
  std::vector< std::vector< uint32_t > > rows, lags;                   // per thread: received spikes for the device
  std::vector< std::vector< std::vector< uint32_t > > > prows, plags;  // per thread, per plastic model
#endif
};
}

#endif
