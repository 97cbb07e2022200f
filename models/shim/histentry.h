/*
 * nestcl's NEST-API shim: one entry of a neuron's spike history, as STDP
 * synapses read it (NEST's histentry).
 */
#ifndef HISTENTRY_H
#define HISTENTRY_H

#include <cstddef>

namespace nest
{
class histentry
{
public:
  histentry( double t, double Kminus, double Kminus_triplet, size_t access_counter )
    : t_( t )
    , Kminus_( Kminus )
    , Kminus_triplet_( Kminus_triplet )
    , access_counter_( access_counter )
  {
  }

  double t_;              //!< spike time (ms)
  double Kminus_;         //!< the Kminus trace just after this spike
  double Kminus_triplet_; //!< the triplet trace just after this spike
  size_t access_counter_; //!< reads by incoming STDP synapses so far
};
}  // namespace nest

#endif
