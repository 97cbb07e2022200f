/*
 * nestcl's NEST-API shim: the status dictionary of NEST 3.10 (libnestutil's
 * Dictionary). Models write their status with `d[ names::X ] = member;` and
 * read it with update_value()/update_value_param(). This version is a plain
 * map from name to a small variant, enough for get_status/set_status in the
 * reference harness; numeric entries convert between integer and floating
 * types on read as NEST's does, anything else must match exactly.
 */
#ifndef DICTIONARY_H
#define DICTIONARY_H

#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace nest
{
using any_type = std::variant< bool, int, long, size_t, double, std::string, std::vector< double >, std::vector< long >, std::vector< std::string > >;

class Dictionary : public std::map< std::string, any_type >
{
public:
  bool
  known( const std::string& key ) const
  {
    return find( key ) != end();
  }

  template < typename T >
  T
  get( const std::string& key ) const
  {
    const auto it = find( key );
    if ( it == end() )
    {
      throw std::out_of_range( "unknown dictionary entry '" + key + "'" );
    }
    return cast_< T >( key, it->second );
  }

  /* Assign value from the entry if it exists; returns whether it did. */
  template < typename T >
  bool
  update_value( const std::string& key, T& value ) const
  {
    const auto it = find( key );
    if ( it == end() )
    {
      return false;
    }
    value = cast_< T >( key, it->second );
    return true;
  }

  /* Old SLI-style access (*d)[key] and d->known(key) on a DictionaryDatum. */
  Dictionary&
  operator*()
  {
    return *this;
  }
  const Dictionary&
  operator*() const
  {
    return *this;
  }
  Dictionary*
  operator->()
  {
    return this;
  }
  const Dictionary*
  operator->() const
  {
    return this;
  }

private:
  template < typename T >
  static T
  cast_( const std::string& key, const any_type& v )
  {
    if constexpr ( std::is_arithmetic_v< T > )
    {
      return std::visit(
        [ &key ]( const auto& x ) -> T
        {
          using X = std::decay_t< decltype( x ) >;
          if constexpr ( std::is_arithmetic_v< X > )
          {
            return static_cast< T >( x );
          }
          else
          {
            throw std::invalid_argument( "dictionary entry '" + key + "' is not a number" );
          }
        },
        v );
    }
    else
    {
      if ( const T* p = std::get_if< T >( &v ) )
      {
        return *p;
      }
      throw std::invalid_argument( "dictionary entry '" + key + "' has the wrong type" );
    }
  }
};
}  // namespace nest

#endif
