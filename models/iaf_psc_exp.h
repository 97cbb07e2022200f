/*
 * iaf_psc_exp: leaky integrate-and-fire neuron with exponentially decaying
 * synaptic currents, integrated exactly on the time grid (Rotter & Diesmann
 * 1999). nestcl's own NEST-style source (NEST 3.10 names and layout, written
 * for this project from the equations); translator input and native reference.
 *
 * Dynamics (V relative to E_L, stored in V_m_):
 *   dV/dt = -V/tau_m + (I_syn_ex + I_syn_in + I_0 + I_e)/C_m
 *   dI_syn_X/dt = -I_syn_X/tau_syn_X, a spike of weight w adds w pA.
 * Currents on receptor 0 (I_0) act on V directly; currents on receptor 1 (I_1)
 * are filtered through the excitatory synapse, as in NEST. NEST's escape-noise
 * threshold (rho, delta) needs a random stream inside update() and is not part
 * of this model; its threshold is deterministic.
 */
#ifndef IAF_PSC_EXP_H
#define IAF_PSC_EXP_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_iaf_psc_exp( const std::string& name );

class iaf_psc_exp : public ArchivingNode
{
public:
  iaf_psc_exp();
  iaf_psc_exp( const iaf_psc_exp& );

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
    return "iaf_psc_exp";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( const Time&, const long, const long ) override;

  friend class RecordablesMap< iaf_psc_exp >;
  friend class UniversalDataLogger< iaf_psc_exp >;

  struct Parameters_
  {
    double Tau_;     //!< Membrane time constant in ms
    double C_;       //!< Membrane capacitance in pF
    double t_ref_;   //!< Refractory period in ms
    double E_L_;     //!< Resting potential in mV
    double I_e_;     //!< Constant external current in pA
    double Theta_;   //!< Threshold, relative to E_L_
    double V_reset_; //!< Reset potential, relative to E_L_
    double tau_ex_;  //!< Excitatory synaptic time constant in ms
    double tau_in_;  //!< Inhibitory synaptic time constant in ms

    Parameters_();

    void get( Dictionary& ) const;
    double set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double i_0_;      //!< Current on receptor 0 (pA), applied in the next step
    double i_1_;      //!< Current on receptor 1 (pA), fed into the excitatory synapse
    double i_syn_ex_; //!< Excitatory synaptic current in pA
    double i_syn_in_; //!< Inhibitory synaptic current in pA
    double V_m_;      //!< Membrane potential relative to E_L_
    int r_ref_;       //!< Refractory steps left

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, const double, Node* );
  };

  struct Buffers_
  {
    Buffers_( iaf_psc_exp& );
    Buffers_( const Buffers_&, iaf_psc_exp& );

    //! Channels of input_buffer_
    enum
    {
      SYN_IN = 0,
      SYN_EX,
      I0,
      I1,
      NUM_INPUT_CHANNELS
    };

    MultiChannelInputBuffer< NUM_INPUT_CHANNELS > input_buffer_;
    UniversalDataLogger< iaf_psc_exp > logger_;
  };

  struct Variables_
  {
    double P20_;  //!< Constant current -> V
    double P11ex_;
    double P11in_;
    double P21ex_; //!< Excitatory current -> V
    double P21in_;
    double P22_;

    double weighted_spikes_ex_;
    double weighted_spikes_in_;

    int RefractoryCounts_;
  };

  double
  get_V_m_() const
  {
    return S_.V_m_ + P_.E_L_;
  }
  double
  get_I_syn_ex_() const
  {
    return S_.i_syn_ex_;
  }
  double
  get_I_syn_in_() const
  {
    return S_.i_syn_in_;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< iaf_psc_exp > recordablesMap_;
};

inline size_t
iaf_psc_exp::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_exp::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 && receptor_type != 1 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return receptor_type;
}

inline size_t
iaf_psc_exp::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_psc_exp::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_psc_exp::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  const double delta_EL = ptmp.set( d, this );
  State_ stmp = S_;
  stmp.set( d, ptmp, delta_EL, this );
  ArchivingNode::set_status( d );
  P_ = ptmp;
  S_ = stmp;
}
}  // namespace nest

#endif
