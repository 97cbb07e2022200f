/*
 * nestcl's NEST-API shim: UniversalDataLogger<HostNode>, the per-neuron buffer
 * of multimeter samples. A DataLoggingRequest connects a recorder with an
 * interval (connect_logging_device); record_data(step) then samples every
 * recordable when (step + 1) % interval == 0 (NEST records the state at the end
 * of step `step`, stamped step + 1), and handle() hands the rows to the
 * request. With no recorder connected record_data() does nothing.
 */
#ifndef UNIVERSAL_DATA_LOGGER_H
#define UNIVERSAL_DATA_LOGGER_H

#include <cstddef>
#include <vector>

#include "event.h"
#include "recordables_map.h"

namespace nest
{
template < typename HostNode >
class UniversalDataLogger
{
public:
  explicit UniversalDataLogger( HostNode& host )
    : host_( host )
  {
  }

  size_t connect_logging_device( const DataLoggingRequest& request, const RecordablesMap< HostNode >& map );
  void init();
  void reset();
  void record_data( long step );
  void handle( DataLoggingRequest& request );

private:
  HostNode& host_;
  long interval_steps_ = 0;
  std::vector< typename RecordablesMap< HostNode >::DataAccessFct > getters_;
  std::vector< std::vector< double > > rows_;
};
}  // namespace nest

#endif
