/*
 * pp_psc_delta: point process neuron with leaky integration of delta-shaped
 * input currents (NEST's pp_psc_delta; Cardanobile & Rotter 2010, Jolivet
 * et al. 2006).
 *
 * The membrane potential V (y3_, relative to 0) integrates input exactly:
 *
 *   V(t+h) = P30 (I_stim + I_e) + P33 V(t) + sum of incoming weights,
 *   P33 = exp(-h / tau_m), P30 = (1 - P33) tau_m / C_m.
 *
 * Spike-frequency adaptation subtracts q = sum_i q_i from V, each q_i decaying
 * with tau_sfa[i] and jumping by q_sfa[i] per emitted spike. Outside the dead
 * time the neuron fires with the rate
 *
 *   rate = c_1 V' + c_2 exp(c_3 V'),   V' = V - q   (Hz),
 *
 * either as a Bernoulli trial per step (dead_time > 0: one spike with
 * probability 1 - exp(-rate h)) or as a Poisson number of spikes per step
 * (dead_time 0), sent as one SpikeEvent of that multiplicity. After a spike
 * the neuron is dead for dead_time (or a gamma-distributed time of mean
 * dead_time and shape dead_time_shape when dead_time_random), and V is reset to
 * 0 when with_reset.
 *
 * The same arithmetic, names and defaults as NEST 3.10's pp_psc_delta; this
 * project's version sizes Variables_::Q33_ and State_::q_elems_ with resize()
 * where NEST's pre_run_hook() appends to them once, keeps tau_sfa and q_sfa as
 * lists only (NEST also takes a single number) and has no t_ref_remaining.
 *
 * Sends: SpikeEvent (with multiplicity). Receives: SpikeEvent, CurrentEvent,
 * DataLoggingRequest. Recordables: V_m, E_sfa.
 */
#ifndef PP_PSC_DELTA_H
#define PP_PSC_DELTA_H

#include <vector>

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "random_generators.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_pp_psc_delta( const std::string& name );

class pp_psc_delta : public ArchivingNode
{
public:
  pp_psc_delta();
  pp_psc_delta( const pp_psc_delta& );

  using Node::handle;
  using Node::handles_test_event;

  void handle( SpikeEvent& ) override;
  void handle( CurrentEvent& ) override;
  void handle( DataLoggingRequest& ) override;

  size_t handles_test_event( SpikeEvent&, size_t ) override;
  size_t handles_test_event( CurrentEvent&, size_t ) override;
  size_t handles_test_event( DataLoggingRequest&, size_t ) override;

  void get_status( Dictionary& ) const override;
  void set_status( const Dictionary& ) override;

  std::string
  get_name() const override
  {
    return "pp_psc_delta";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  friend class RecordablesMap< pp_psc_delta >;
  friend class UniversalDataLogger< pp_psc_delta >;

  struct Parameters_
  {
    double tau_m_;                //!< Membrane time constant in ms
    double c_m_;                  //!< Membrane capacitance in pF
    double dead_time_;            //!< Dead time in ms
    bool dead_time_random_;       //!< Draw the dead time from a gamma distribution
    long dead_time_shape_;        //!< Shape of that gamma distribution
    bool with_reset_;             //!< Reset V to 0 after a spike
    std::vector< double > tau_sfa_; //!< Adaptation time constants in ms
    std::vector< double > q_sfa_;   //!< Adaptation jumps in mV
    double c_1_;                  //!< Slope of the linear part of the rate (Hz/mV)
    double c_2_;                  //!< Prefactor of the exponential part (Hz)
    double c_3_;                  //!< Coefficient of the exponential part (1/mV)
    double I_e_;                  //!< Constant external current in pA

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double y0_; //!< Input current (pA), applied in the next step
    double y3_; //!< Membrane potential (mV)
    double q_;  //!< Sum of the adaptation elements (mV)
    std::vector< double > q_elems_; //!< Adaptation elements, one per tau_sfa
    int r_;     //!< Dead-time steps left
    bool initialized_; //!< q_elems_ are sized for tau_sfa

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, Node* );
  };

  struct Buffers_
  {
    Buffers_( pp_psc_delta& );
    Buffers_( const Buffers_&, pp_psc_delta& );

    RingBuffer spikes_;
    RingBuffer currents_;

    UniversalDataLogger< pp_psc_delta > logger_;
  };

  struct Variables_
  {
    double P30_; //!< Constant current -> V
    double P33_; //!< V decay over one step
    std::vector< double > Q33_; //!< Decay of each adaptation element over one step
    double h_;        //!< Resolution in ms
    double dt_rate_;  //!< Rate of the dead-time gamma distribution (1/ms)
    RngPtr rng_;      //!< The VP's generator
    gamma_distribution gamma_dist_;
    poisson_distribution poisson_dist_;
    int DeadTimeCounts_;
  };

  double
  get_V_m_() const
  {
    return S_.y3_;
  }

  double
  get_E_sfa_() const
  {
    return S_.q_;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< pp_psc_delta > recordablesMap_;
};

inline size_t
pp_psc_delta::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
pp_psc_delta::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
pp_psc_delta::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
pp_psc_delta::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
pp_psc_delta::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  ptmp.set( d, this );
  State_ stmp = S_;
  stmp.set( d, ptmp, this );
  ArchivingNode::set_status( d );
  P_ = ptmp;
  S_ = stmp;
}
}  // namespace nest

#endif
