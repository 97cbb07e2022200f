/*
 * iaf_tum_2000: leaky integrate-and-fire neuron with exponentially decaying
 * synaptic currents (as iaf_psc_exp) whose spikes carry the short-term
 * depression and facilitation of its outgoing synapses (Tsodyks, Uziel &
 * Markram 2000). nestcl's own NEST-style source (NEST 3.10 names and layout,
 * written for this project from the equations); translator input and native
 * reference. It exercises what the device keeps for NEST's ArchivingNode and
 * SpikeEvent: the last spike time (get_spiketime_ms()) and the spike offset
 * as a payload (set_offset() in update(), get_offset() in handle()).
 *
 * Presynaptic resources, per neuron: x (recovered), y (active), z = 1 - x - y
 * (inactive), utilisation u. At a spike, h after the last one (from t = 0 for
 * the first, as NEST's model does):
 *   u <- u exp(-h/tau_fac) (0 for tau_fac = 0), then u <- u + U (1 - u);
 *   x, y propagate exactly over h (tau_psc, tau_rec), then the jump
 *   dy = u x moves from x to y; dy is sent as the spike's offset.
 * A spike received on receptor 1 adds weight * offset (the sender's dy); on
 * receptor 0 it adds its weight, as iaf_psc_exp. The membrane: dV/dt =
 * -V/tau_m + (I_syn_ex + I_syn_in + I_0 + I_e)/C_m, deterministic threshold.
 */
#ifndef IAF_TUM_2000_H
#define IAF_TUM_2000_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_iaf_tum_2000( const std::string& name );

class iaf_tum_2000 : public ArchivingNode
{
public:
  iaf_tum_2000();
  iaf_tum_2000( const iaf_tum_2000& );

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
    return "iaf_tum_2000";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( const Time&, const long, const long ) override;

  friend class RecordablesMap< iaf_tum_2000 >;
  friend class UniversalDataLogger< iaf_tum_2000 >;

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
    double tau_psc_; //!< Time constant of the active resources y in ms
    double tau_rec_; //!< Recovery time constant of x in ms
    double tau_fac_; //!< Facilitation time constant of u in ms (0: none)
    double U_;       //!< Utilisation increment per spike

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
    double x_;        //!< Recovered resources
    double y_;        //!< Active resources
    double u_;        //!< Utilisation

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, const double, Node* );
  };

  struct Buffers_
  {
    Buffers_( iaf_tum_2000& );
    Buffers_( const Buffers_&, iaf_tum_2000& );

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
    UniversalDataLogger< iaf_tum_2000 > logger_;
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

  static RecordablesMap< iaf_tum_2000 > recordablesMap_;
};

inline size_t
iaf_tum_2000::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 && receptor_type != 1 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return receptor_type;
}

inline size_t
iaf_tum_2000::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 && receptor_type != 1 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return receptor_type;
}

inline size_t
iaf_tum_2000::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_tum_2000::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_tum_2000::set_status( const Dictionary& d )
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
