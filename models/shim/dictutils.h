/*
 * nestcl's NEST-API shim: the SLI-era dictionary helpers (NEST <= 3.9 spelling:
 * DictionaryDatum, def<T>, updateValue<T>, updateValueParam<T>) mapped onto the
 * shim's Dictionary, so models written in either NEST dialect compile.
 */
#ifndef DICTUTILS_H
#define DICTUTILS_H

#include <string>

#include "dict_util.h"
#include "dictionary.h"

namespace nest
{
using DictionaryDatum = Dictionary;

template < typename T, typename V >
void
def( Dictionary& d, const std::string& key, const V& value )
{
  d[ key ] = static_cast< T >( value );
}

template < typename T, typename V >
bool
updateValue( const Dictionary& d, const std::string& key, V& value )
{
  T tmp;
  if ( not d.update_value( key, tmp ) )
  {
    return false;
  }
  value = tmp;
  return true;
}

template < typename T, typename V >
bool
updateValueParam( const Dictionary& d, const std::string& key, V& value, Node* )
{
  return updateValue< T >( d, key, value );
}
}  // namespace nest

#endif
