/*
 * nestcl's NEST-API shim: member definitions of UniversalDataLogger (NEST keeps
 * them in this _impl header too, included by model .cpp files only).
 */
#ifndef UNIVERSAL_DATA_LOGGER_IMPL_H
#define UNIVERSAL_DATA_LOGGER_IMPL_H

#include "universal_data_logger.h"

namespace nest
{
template < typename HostNode >
size_t
UniversalDataLogger< HostNode >::connect_logging_device( const DataLoggingRequest& request,
  const RecordablesMap< HostNode >& map )
{
  interval_steps_ = request.get_recording_interval_steps();
  getters_.clear();
  for ( const auto& entry : map )
  {
    getters_.push_back( entry.second );
  }
  rows_.clear();
  return 0;
}

template < typename HostNode >
void
UniversalDataLogger< HostNode >::init()
{
  rows_.reserve( 16 );
}

template < typename HostNode >
void
UniversalDataLogger< HostNode >::reset()
{
  rows_.clear();
}

template < typename HostNode >
void
UniversalDataLogger< HostNode >::record_data( long step )
{
  if ( interval_steps_ <= 0 or ( step + 1 ) % interval_steps_ != 0 )
  {
    return;
  }
  std::vector< double > row;
  row.reserve( getters_.size() + 1 );
  row.push_back( static_cast< double >( step + 1 ) );
  for ( const auto f : getters_ )
  {
    row.push_back( ( host_.*f )() );
  }
  rows_.push_back( row );
}

template < typename HostNode >
void
UniversalDataLogger< HostNode >::handle( DataLoggingRequest& request )
{
  for ( auto& row : rows_ )
  {
    request.rows.push_back( row );
  }
  rows_.clear();
}
}  // namespace nest

#endif
