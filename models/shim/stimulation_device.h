/*
 * nestcl's NEST-API shim: StimulationDevice, the base of generators. It holds
 * the device window (origin, start, stop, in ms on the status dictionary) and
 * answers is_active(T) as NEST does: a spike generator is active at step s when
 * origin + start < s <= origin + stop (in steps); current generators act two
 * steps later because their events need one step to arrive and one to act.
 */
#ifndef STIMULATION_DEVICE_H
#define STIMULATION_DEVICE_H

#include <string>

#include "dictionary.h"
#include "exceptions.h"
#include "nest_names.h"
#include "nest_time.h"
#include "node.h"

namespace nest
{
class StimulationDevice : public Node
{
public:
  enum Type
  {
    CURRENT_GENERATOR,
    SPIKE_GENERATOR,
    DOUBLE_DATA_GENERATOR,
    DELAYED_RATE_CONNECTION_GENERATOR,
  };

  virtual Type
  get_type() const
  {
    return SPIKE_GENERATOR;
  }

  bool
  is_active( const Time& T ) const
  {
    long step = T.get_steps();
    if ( get_type() == CURRENT_GENERATOR || get_type() == DELAYED_RATE_CONNECTION_GENERATOR
      || get_type() == DOUBLE_DATA_GENERATOR )
    {
      step = step + 2;
    }
    return t_min_ < step && step <= t_max_;
  }

  void
  get_status( Dictionary& d ) const override
  {
    d[ names::origin ] = origin_.get_ms();
    d[ names::start ] = start_.get_ms();
    d[ names::stop ] = stop_.get_ms();
  }

  void
  set_status( const Dictionary& d ) override
  {
    Time origin = origin_;
    Time start = start_;
    Time stop = stop_;
    update_time_( d, names::origin, origin );
    update_time_( d, names::start, start );
    update_time_( d, names::stop, stop );
    if ( stop < start )
    {
      throw BadProperty( "stop >= start required." );
    }
    origin_ = origin;
    start_ = start;
    stop_ = stop;
  }

protected:
  void
  init_state()
  {
  }
  void
  init_buffers()
  {
  }
  void
  pre_run_hook() override
  {
    t_min_ = ( origin_ + start_ ).get_steps();
    t_max_ = ( origin_ + stop_ ).get_steps();
  }

private:
  static void
  update_time_( const Dictionary& d, const std::string& name, Time& value )
  {
    double ms;
    if ( d.update_value( name, ms ) )
    {
      const Time t = Time( Time::ms( ms ) );
      if ( t.is_finite() && !t.is_grid_time() )
      {
        throw BadProperty( name + " must be a multiple of the simulation resolution." );
      }
      value = t;
    }
  }

  Time origin_;
  Time start_;
  Time stop_ = Time::pos_inf();
  long t_min_ = 0;
  long t_max_ = 0;
};
}  // namespace nest

#endif
