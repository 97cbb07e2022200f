/*
 * nestcl's NEST-API shim: update_value_param() of NEST 3.10. In NEST it also
 * accepts random/spatial Parameter objects; the shim's dictionary holds plain
 * values only, so it is update_value().
 */
#ifndef DICT_UTIL_H
#define DICT_UTIL_H

#include <string>

#include "dictionary.h"

namespace nest
{
class Node;

template < typename T >
bool
update_value_param( Dictionary const& d, const std::string& key, T& value, Node* )
{
  return d.update_value( key, value );
}
}  // namespace nest

#endif
