/*
 * Drives natively compiled models (models/ against models/shim) the way NEST's
 * simulation loop would, for the model tests: kernel set-up (resolution,
 * delays), super steps of min_delay lags with the slice origin set, event
 * delivery through the models' own handle() functions, and multimeter-style
 * recording through DataLoggingRequest. Shared by the native self-test and the
 * trajectory harness.
 */
#ifndef NESTCL_TEST_SHIM_DRIVER_HPP
#define NESTCL_TEST_SHIM_DRIVER_HPP

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "event.h"
#include "kernel_manager.h"
#include "nest_time.h"
#include "node.h"
/* The tests call the models' inline handles_test_event() directly, not through
 * NEST's virtual dispatch, and so instantiate UniversalDataLogger<Model> in
 * their own translation unit: its member definitions must be visible here.
 * Without them the link relied on the model's .cpp happening to emit an
 * out-of-line copy, which -O3 (Release) inlines away. */
#include "universal_data_logger_impl.h"

namespace nestcl_test
{
/* Resolution and delays must be set before nodes are built: rings are sized then. */
inline void
setup_kernel( double resolution_ms, long min_delay, long max_delay )
{
  nest::Time::set_resolution( resolution_ms );
  nest::kernel().connection_manager.set_delay_extrema_( min_delay, max_delay );
  nest::kernel().simulation_manager.set_slice_origin_( nest::Time() );
  nest::kernel().event_delivery_manager.emitted_spikes_.clear();
}

inline void
set_slice_origin( long origin_steps )
{
  nest::kernel().simulation_manager.set_slice_origin_( nest::Time( nest::Time::step( origin_steps ) ) );
}

/*
 * Delivers a spike that is due at arrival_step (it acts in the update of that
 * step). With delay 1 and stamp = arrival_step, NEST's get_rel_delivery_steps
 * gives arrival_step - slice origin; that must lie in [0, min_delay + max_delay).
 */
inline void
deliver_spike(
  nest::Node& target, long arrival_step, double weight, long rport = 0, size_t multiplicity = 1, double offset = 0.0 )
{
  nest::SpikeEvent e;
  e.set_offset( offset );
  e.set_stamp( nest::Time( nest::Time::step( arrival_step ) ) );
  e.set_delay_steps( 1 );
  e.set_weight( weight );
  e.set_rport( rport );
  e.set_multiplicity( multiplicity );
  e.set_receiver( target );
  target.handle( e );
}

inline void
deliver_current( nest::Node& target, long arrival_step, double current, double weight = 1.0, long rport = 0 )
{
  nest::CurrentEvent e;
  e.set_stamp( nest::Time( nest::Time::step( arrival_step ) ) );
  e.set_delay_steps( 1 );
  e.set_current( current );
  e.set_weight( weight );
  e.set_rport( rport );
  e.set_receiver( target );
  target.handle( e );
}

/* One lag of one node, at the current slice origin. */
inline void
update_lag( nest::Node& node, long lag )
{
  node.update( nest::kernel().simulation_manager.get_slice_origin(), lag, lag + 1 );
}

inline int
fail( const char* what, const std::string& detail )
{
  std::fprintf( stderr, "FAIL %s: %s\n", what, detail.c_str() );
  return 1;
}
}  // namespace nestcl_test

#endif
