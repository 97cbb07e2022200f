/*
 * secondary_event.h (nestcl shim): the gap-junction event of NEST 3.10, as
 * the gap-junction models send it (the coefficients of a waveform). The shim
 * has no secondary connections; nothing receives one.
 */
#ifndef SECONDARY_EVENT_H
#define SECONDARY_EVENT_H

#include <vector>

#include "event.h"

namespace nest
{
template < typename DataType, typename Subclass >
class DataSecondaryEvent : public Event
{
public:
  void
  set_coeffarray( std::vector< DataType >& ca )
  {
    coeffarray_ = &ca;
  }

private:
  std::vector< DataType >* coeffarray_ = nullptr;
};

class GapJunctionEvent : public DataSecondaryEvent< double, GapJunctionEvent >
{
};
}

#endif
