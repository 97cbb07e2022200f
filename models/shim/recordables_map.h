/*
 * nestcl's NEST-API shim: RecordablesMap<HostNode>, the names a model offers to
 * a multimeter, each with the const member function that reads it. Each model
 * specialises create() in its .cpp, as in NEST.
 */
#ifndef RECORDABLES_MAP_H
#define RECORDABLES_MAP_H

#include <map>
#include <string>
#include <vector>

namespace nest
{
template < typename HostNode >
class RecordablesMap : public std::map< std::string, double ( HostNode::* )() const >
{
public:
  typedef double ( HostNode::*DataAccessFct )() const;

  /* Fills the map; specialised per model. */
  void create();

  std::vector< std::string >
  get_list() const
  {
    std::vector< std::string > names;
    for ( const auto& entry : *this )
    {
      names.push_back( entry.first );
    }
    return names;
  }

private:
  void
  insert_( const std::string& name, const DataAccessFct f )
  {
    this->insert( std::make_pair( name, f ) );
  }
};
}  // namespace nest

#endif
