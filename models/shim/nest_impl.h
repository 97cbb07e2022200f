/*
 * nestcl's NEST-API shim: NEST's nest_impl.h provides register_node_model<>().
 * The shim has no model registry; registration is a no-op that keeps the
 * models' register_<model>() functions compiling.
 */
#ifndef NEST_IMPL_H
#define NEST_IMPL_H

#include <string>

#include "kernel_manager.h"

namespace nest
{
template < class ModelT >
void
register_node_model( const std::string&, const char* = nullptr )
{
}
}  // namespace nest

#endif
