/*
 * nestcl_synapse.h: what a translated synapse's send() is given for one
 * presynaptic spike (nestcl-translate renders NEST's calls onto these
 * members); compiled as C11 and as OpenCL C.
 *
 *   e.get_stamp().get_ms()                   t_spike
 *   get_delay(), get_delay_steps()           delay_ms, delay_steps
 *   get_rport()                              rport
 *   e.get_multiplicity()                     multiplicity
 *   kernel().connection_manager.get_stdp_eps()  eps
 *   target->get_history( ... ), get_K_value( t )  hist, target (the neuron's
 *        row in the history), tau_minus_inv (the target's 1 / tau_minus)
 *   std::exp, std::pow                       glibc's, in variant `fused`
 *
 * The send function writes the weight the spike delivers into *w and returns
 * 1 when it sent the event (e()); the caller adds w times the multiplicity to
 * the target's ring, as NEST's handle(SpikeEvent&) does.
 */
#ifndef NESTCL_SYNAPSE_H
#define NESTCL_SYNAPSE_H

#ifndef __OPENCL_C_VERSION__
#include "nestcl_history.h"
#include "nestcl_libm.h"
#include "nestcl_types.h"
#endif

typedef struct nestcl_syn_env {
  const nestcl_history *hist; /* NULL for synapses without plasticity */
  nestcl_u32 target;
  double t_spike;
  double delay_ms;
  nestcl_i64 delay_steps;
  nestcl_i64 rport;
  nestcl_i64 multiplicity;
  double tau_minus_inv;
  double eps;
  int fused;
} nestcl_syn_env;

#endif
