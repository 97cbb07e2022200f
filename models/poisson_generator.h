/*
 * poisson_generator: a device that sends every target an independent Poisson
 * spike train of the given rate, as NEST's does: update() marks each active
 * step with one DSSpikeEvent, and event_hook() draws, per target, how many
 * spikes that step carries (the event's multiplicity; zero sends nothing).
 * nestcl's own NEST-style source (NEST 3.10 layout, written for this project).
 * Natively it draws from the shim's generator; on the device the engine
 * replaces the draw with the project's Philox streams keyed by (target, step)
 * (docs/architecture.md, "Determinism and random numbers"), so this file is its specification, not its device code.
 *
 * Status: rate (spikes/s), and the device window origin, start, stop (ms).
 */
#ifndef POISSON_GENERATOR_H
#define POISSON_GENERATOR_H

#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "random_generators.h"
#include "stimulation_device.h"

namespace nest
{
void register_poisson_generator( const std::string& name );

class poisson_generator : public StimulationDevice
{
public:
  poisson_generator();
  poisson_generator( poisson_generator const& );

  using Node::event_hook;

  void get_status( Dictionary& ) const override;
  void set_status( const Dictionary& ) override;

  StimulationDevice::Type get_type() const override;

  std::string
  get_name() const override
  {
    return "poisson_generator";
  }

private:
  void init_state_() override;
  void init_buffers_() override;
  void pre_run_hook() override;

  void update( Time const&, const long, const long ) override;
  void event_hook( DSSpikeEvent& ) override;

  struct Parameters_
  {
    double rate_; //!< Rate in spikes/s

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

  struct Variables_
  {
    poisson_distribution poisson_dist_; //!< Spikes per step: Poisson with mean rate * h
  };

  Parameters_ P_;
  Variables_ V_;
};

inline StimulationDevice::Type
poisson_generator::get_type() const
{
  return StimulationDevice::SPIKE_GENERATOR;
}

inline void
poisson_generator::get_status( Dictionary& d ) const
{
  P_.get( d );
  StimulationDevice::get_status( d );
}

inline void
poisson_generator::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  ptmp.set( d, this );
  StimulationDevice::set_status( d );
  P_ = ptmp;
}
}  // namespace nest

#endif
