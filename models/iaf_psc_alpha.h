/*
 * iaf_psc_alpha: leaky integrate-and-fire neuron with alpha-shaped synaptic
 * currents, integrated exactly on the time grid (Rotter & Diesmann 1999). This
 * is nestcl's own NEST-style source of the model (NEST 3.10 names, struct
 * layout and conventions; written for this project from the model equations).
 * It is both the input of nestcl-translate and, compiled against models/shim,
 * the native reference the translated kernels are compared with.
 *
 * Dynamics (V relative to E_L, stored in y3_):
 *   dV/dt = -V/tau_m + (I_ex + I_in + I_0 + I_e)/C_m
 *   dI_X/dt = dI_X - I_X/tau_syn_X,  d(dI_X)/dt = -dI_X/tau_syn_X
 * A spike of weight w adds w * e/tau_syn_X to dI_X, so a PSC of weight 1 peaks
 * at 1 pA after tau_syn_X. V >= V_th emits a spike, V is reset to V_reset and
 * held there for t_ref.
 *
 * Status: E_L, C_m, tau_m, t_ref, V_th, V_reset, tau_syn_ex, tau_syn_in, I_e,
 * V_min (parameters); V_m (state). Recordables: V_m, I_syn_ex, I_syn_in.
 */
#ifndef IAF_PSC_ALPHA_H
#define IAF_PSC_ALPHA_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_iaf_psc_alpha( const std::string& name );

class iaf_psc_alpha : public ArchivingNode
{
public:
  iaf_psc_alpha();
  iaf_psc_alpha( const iaf_psc_alpha& );

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
    return "iaf_psc_alpha";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  friend class RecordablesMap< iaf_psc_alpha >;
  friend class UniversalDataLogger< iaf_psc_alpha >;

  struct Parameters_
  {
    double Tau_;        //!< Membrane time constant in ms
    double C_;          //!< Membrane capacitance in pF
    double TauR_;       //!< Refractory period in ms
    double E_L_;        //!< Resting potential in mV
    double I_e_;        //!< Constant external current in pA
    double V_reset_;    //!< Reset potential, relative to E_L_
    double Theta_;      //!< Threshold, relative to E_L_
    double LowerBound_; //!< Lower bound of the membrane potential, relative to E_L_
    double tau_ex_;     //!< Excitatory synaptic time constant in ms
    double tau_in_;     //!< Inhibitory synaptic time constant in ms

    Parameters_();

    void get( Dictionary& ) const;
    //! Returns the change of E_L_, which State_::set() needs to keep V_m.
    double set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double y0_;    //!< Input current from CurrentEvents (pA), applied in the next step
    double dI_ex_; //!< Derivative-like auxiliary of the excitatory alpha current
    double I_ex_;  //!< Excitatory synaptic current in pA
    double dI_in_;
    double I_in_;
    double y3_; //!< Membrane potential relative to E_L_
    int r_;     //!< Refractory steps left

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, double delta_EL, Node* node );
  };

  struct Buffers_
  {
    Buffers_( iaf_psc_alpha& );
    Buffers_( const Buffers_&, iaf_psc_alpha& );

    //! Channels of input_buffer_
    enum
    {
      SYN_IN = 0,
      SYN_EX,
      I0,
      NUM_INPUT_CHANNELS
    };

    MultiChannelInputBuffer< NUM_INPUT_CHANNELS > input_buffer_;
    UniversalDataLogger< iaf_psc_alpha > logger_;
  };

  struct Variables_
  {
    //! Jump of dI per unit weight; makes a weight-1 PSC peak at 1 pA.
    double EPSCInitialValue_;
    double IPSCInitialValue_;
    int RefractoryCounts_;

    double P11_ex_;
    double P21_ex_;
    double P22_ex_;
    double P31_ex_;
    double P32_ex_;
    double P11_in_;
    double P21_in_;
    double P22_in_;
    double P31_in_;
    double P32_in_;
    double P30_;
    double P33_;
    double expm1_tau_m_;

    double weighted_spikes_ex_;
    double weighted_spikes_in_;
  };

  double
  get_V_m_() const
  {
    return S_.y3_ + P_.E_L_;
  }
  double
  get_I_syn_ex_() const
  {
    return S_.I_ex_;
  }
  double
  get_I_syn_in_() const
  {
    return S_.I_in_;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< iaf_psc_alpha > recordablesMap_;
};

inline size_t
iaf_psc_alpha::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_alpha::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_alpha::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_psc_alpha::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_psc_alpha::set_status( const Dictionary& d )
{
  // Work on copies so that a rejected value leaves the node unchanged.
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
