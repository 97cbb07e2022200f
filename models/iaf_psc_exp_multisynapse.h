/*
 * iaf_psc_exp_multisynapse: leaky integrate-and-fire neuron with any number of
 * exponentially decaying synaptic currents, one per receptor port, each with
 * its own time constant tau_syn[k] (receptor ports 1..n_synapses; port k feeds
 * current k-1). Integrated exactly on the time grid:
 *   dV/dt = -V/tau_m + (sum_k I_k + I_0 + I_e)/C_m,  dI_k/dt = -I_k/tau_syn[k]
 * (V relative to E_L, stored in V_m_); a spike of weight w on port k adds w pA
 * to I_k. nestcl's own NEST-style source (NEST 3.10 names and layout, written
 * for this project from the equations). Its per-receptor data are the shape
 * NESTML-generated models have: std::vector<double> members sized by the
 * receptor count and a std::vector<RingBuffer> indexed by receptor. The vectors
 * are resized whenever tau_syn changes (resize_receptors_), so pre_run_hook()
 * and update() only index them.
 */
#ifndef IAF_PSC_EXP_MULTISYNAPSE_H
#define IAF_PSC_EXP_MULTISYNAPSE_H

#include <vector>

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_iaf_psc_exp_multisynapse( const std::string& name );

class iaf_psc_exp_multisynapse : public ArchivingNode
{
public:
  iaf_psc_exp_multisynapse();
  iaf_psc_exp_multisynapse( const iaf_psc_exp_multisynapse& );

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
    return "iaf_psc_exp_multisynapse";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( const Time&, const long, const long ) override;

  //! Sizes every per-receptor vector to the receptor count.
  void resize_receptors_();

  friend class RecordablesMap< iaf_psc_exp_multisynapse >;
  friend class UniversalDataLogger< iaf_psc_exp_multisynapse >;

  struct Parameters_
  {
    double Tau_;             //!< Membrane time constant in ms
    double C_;               //!< Membrane capacitance in pF
    double refractory_time_; //!< Refractory period in ms
    double E_L_;             //!< Resting potential in mV
    double I_e_;             //!< Constant external current in pA
    double V_reset_;         //!< Reset potential, relative to E_L_
    double Theta_;           //!< Threshold, relative to E_L_
    std::vector< double > tau_syn_; //!< Synaptic time constant of each receptor in ms

    Parameters_();

    size_t
    n_receptors() const
    {
      return tau_syn_.size();
    }

    void get( Dictionary& ) const;
    double set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double I_const_;             //!< Input current (pA), applied in the next step
    std::vector< double > i_syn_; //!< Synaptic current of each receptor in pA
    double V_m_;                 //!< Membrane potential relative to E_L_
    int refractory_steps_;       //!< Refractory steps left

    explicit State_( const Parameters_& );

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, double, Node* );
  };

  struct Buffers_
  {
    Buffers_( iaf_psc_exp_multisynapse& );
    Buffers_( const Buffers_&, iaf_psc_exp_multisynapse& );

    std::vector< RingBuffer > spikes_; //!< One ring per receptor
    RingBuffer currents_;

    UniversalDataLogger< iaf_psc_exp_multisynapse > logger_;
  };

  struct Variables_
  {
    std::vector< double > P11_syn_; //!< Decay of each synaptic current over one step
    std::vector< double > P21_syn_; //!< Synaptic current -> V
    double P20_;                    //!< Constant current -> V
    double P22_;                    //!< V decay over one step
    int RefractoryCounts_;
  };

  double
  get_V_m_() const
  {
    return S_.V_m_ + P_.E_L_;
  }
  double
  get_I_syn_() const
  {
    double sum = 0.0;
    for ( const double i : S_.i_syn_ )
    {
      sum += i;
    }
    return sum;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< iaf_psc_exp_multisynapse > recordablesMap_;
};

inline size_t
iaf_psc_exp_multisynapse::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type <= 0 || receptor_type > P_.n_receptors() )
  {
    throw IncompatibleReceptorType( receptor_type, get_name(), "SpikeEvent" );
  }
  return receptor_type;
}

inline size_t
iaf_psc_exp_multisynapse::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_psc_exp_multisynapse::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_psc_exp_multisynapse::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_psc_exp_multisynapse::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  const double delta_EL = ptmp.set( d, this );
  State_ stmp = S_;
  stmp.set( d, ptmp, delta_EL, this );
  ArchivingNode::set_status( d );
  P_ = ptmp;
  S_ = stmp;
  resize_receptors_();
}
}  // namespace nest

#endif
