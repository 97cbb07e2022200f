/*
 * nestcl's NEST-API shim: NEST splits template definitions of the ring buffers
 * into this header; the shim's are all in ring_buffer.h.
 */
#ifndef RING_BUFFER_IMPL_H
#define RING_BUFFER_IMPL_H

#include "ring_buffer.h"

#endif
