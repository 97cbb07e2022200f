/*
 * iaf_psc_delta: leaky integrate-and-fire neuron with delta-shaped synaptic
 * input: a spike of weight w makes the membrane potential jump by w mV. nestcl's
 * own NEST-style source (NEST 3.10 names and layout, written for this project
 * from the equations); translator input and native reference.
 *
 *   dV/dt = -V/tau_m + (I_0 + I_e)/C_m   (V relative to E_L, stored in y3_)
 *
 * integrated exactly over one step. Spikes arriving during the refractory
 * period are dropped, or, with refractory_input, summed with the decay they
 * would have undergone until the end of the refractory period and applied
 * then; that decay factor is the one transcendental call in update().
 */
#ifndef IAF_PSC_DELTA_H
#define IAF_PSC_DELTA_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_iaf_psc_delta( const std::string& name );

class iaf_psc_delta : public ArchivingNode
{
public:
  iaf_psc_delta();
  iaf_psc_delta( const iaf_psc_delta& );

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
    return "iaf_psc_delta";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  friend class RecordablesMap< iaf_psc_delta >;
  friend class UniversalDataLogger< iaf_psc_delta >;

  struct Parameters_
  {
    double tau_m_;         //!< Membrane time constant in ms
    double c_m_;           //!< Membrane capacitance in pF
    double t_ref_;         //!< Refractory period in ms
    double E_L_;           //!< Resting potential in mV
    double I_e_;           //!< Constant external current in pA
    double V_th_;          //!< Threshold, relative to E_L_
    double V_min_;         //!< Lower bound of V, relative to E_L_
    double V_reset_;       //!< Reset potential, relative to E_L_
    bool with_refr_input_; //!< Keep spikes arriving while refractory

    Parameters_();

    void get( Dictionary& ) const;
    double set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double y0_;                 //!< Input current (pA), applied in the next step
    double y3_;                 //!< Membrane potential relative to E_L_
    int r_;                     //!< Refractory steps left
    double refr_spikes_buffer_; //!< Input kept during the refractory period (mV)

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, double, Node* );
  };

  struct Buffers_
  {
    Buffers_( iaf_psc_delta& );
    Buffers_( const Buffers_&, iaf_psc_delta& );

    RingBuffer spikes_;
    RingBuffer currents_;

    UniversalDataLogger< iaf_psc_delta > logger_;
  };

  struct Variables_
  {
    double P30_; //!< Constant current -> V
    double P33_; //!< V decay over one step
    int RefractoryCounts_;
  };

  double
  get_V_m_() const
  {
    return S_.y3_ + P_.E_L_;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< iaf_psc_delta > recordablesMap_;
};

inline size_t
iaf_psc_delta::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_delta::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_delta::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_psc_delta::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_psc_delta::set_status( const Dictionary& d )
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
