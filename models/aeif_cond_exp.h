/*
 * aeif_cond_exp: adaptive exponential integrate-and-fire neuron (Brette &
 * Gerstner 2005) with conductance-based synapses whose conductances decay
 * exponentially, integrated with GSL's adaptive Runge-Kutta-Fehlberg (4, 5)
 * stepper. nestcl's own NEST-style source (NEST 3.10 names and layout, written
 * for this project from the equations); native reference, and translator
 * input once the translator handles the GSL models.
 *
 * Dynamics (V in mV, conductances in nS, currents in pA):
 *   C_m dV/dt = -g_L (V - E_L) + g_L Delta_T exp((V - V_th)/Delta_T)
 *               - g_ex (V - E_ex) - g_in (V - E_in) - w + I_e + I_stim
 *   tau_w dw/dt = a (V - E_L) - w
 *   dg_X/dt = -g_X / tau_syn_X;  a spike of weight w > 0 adds w to g_ex,
 *   w < 0 adds |w| to g_in.
 * With Delta_T = 0 the exponential term is dropped and V_th is the threshold;
 * otherwise a spike is detected when V reaches V_peak. The right-hand side
 * sees V at most V_peak, and V_reset while refractory. Spikes are detected
 * after every internal integration step (not only at the end of a simulation
 * step): V is reset, w grows by b, and the neuron is refractory for t_ref.
 * V_m below -1000 mV or |w| above 1e6 pA after an internal step is reported
 * as a numerical instability.
 */
#ifndef AEIF_COND_EXP_H
#define AEIF_COND_EXP_H

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv.h>

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "recordables_map.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
/*
 * Right-hand side of the ODE system for GSL. C linkage, since GSL calls it
 * through a function pointer; declared here so that the class can befriend it.
 * pnode points to the aeif_cond_exp being integrated.
 */
extern "C" int aeif_cond_exp_dynamics( double, const double y[], double f[], void* pnode );

void register_aeif_cond_exp( const std::string& name );

class aeif_cond_exp : public ArchivingNode
{
public:
  aeif_cond_exp();
  aeif_cond_exp( const aeif_cond_exp& );
  ~aeif_cond_exp() override;

  using Node::handle;
  using Node::handles_test_event;

  size_t send_test_event( Node&, size_t, synindex, bool ) override;

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
    return "aeif_cond_exp";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( const Time&, const long, const long ) override;

  // The right-hand side reads P_, S_ and B_ like a member function.
  friend int aeif_cond_exp_dynamics( double, const double*, double*, void* );

  friend class RecordablesMap< aeif_cond_exp >;
  friend class UniversalDataLogger< aeif_cond_exp >;

  struct Parameters_
  {
    double V_peak_;  //!< Spike detection threshold in mV (Delta_T > 0)
    double V_reset_; //!< Reset potential in mV
    double t_ref_;   //!< Refractory period in ms

    double g_L;        //!< Leak conductance in nS
    double C_m;        //!< Membrane capacitance in pF
    double E_ex;       //!< Excitatory reversal potential in mV
    double E_in;       //!< Inhibitory reversal potential in mV
    double E_L;        //!< Leak reversal (resting) potential in mV
    double Delta_T;    //!< Slope factor of the spike initiation in mV
    double tau_w;      //!< Adaptation time constant in ms
    double a;          //!< Subthreshold adaptation in nS
    double b;          //!< Spike-triggered adaptation in pA
    double V_th;       //!< Spike initiation threshold in mV
    double tau_syn_ex; //!< Excitatory conductance decay time in ms
    double tau_syn_in; //!< Inhibitory conductance decay time in ms
    double I_e;        //!< Constant external current in pA

    double gsl_error_tol; //!< Absolute and relative error bound of the GSL integrator

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

public:
  struct State_
  {
    //! Indices into the state vector y_
    enum StateVecElems
    {
      V_M = 0,
      G_EXC,
      G_INH,
      W,
      STATE_VEC_SIZE
    };

    //! The integrated variables; a plain C array, as GSL requires
    double y_[ STATE_VEC_SIZE ];
    unsigned int r_; //!< Refractory steps left

    State_( const Parameters_& );
    State_( const State_& );

    State_& operator=( const State_& );

    void get( Dictionary& ) const;
    void set( const Dictionary&, const Parameters_&, Node* );
  };

  struct Buffers_
  {
    Buffers_( aeif_cond_exp& );
    Buffers_( const Buffers_&, aeif_cond_exp& );

    UniversalDataLogger< aeif_cond_exp > logger_;

    //! Summed spike weights (excitatory, and inhibitory as positive numbers) and currents per step
    RingBuffer spike_exc_;
    RingBuffer spike_inh_;
    RingBuffer currents_;

    //! GSL integrator: stepper, step-size control, evolution and the system it integrates
    gsl_odeiv_step* s_;
    gsl_odeiv_control* c_;
    gsl_odeiv_evolve* e_;
    gsl_odeiv_system sys_;

    double step_;            //!< Simulation step in ms
    double IntegrationStep_; //!< GSL's current internal step in ms, kept across steps

    //! Current injected by CurrentEvents in the step being integrated (pA)
    double I_stim_;
  };

  struct Variables_
  {
    //! Spike detection threshold: V_peak_ if Delta_T > 0, V_th if Delta_T == 0
    double V_peak;

    unsigned int refractory_counts_; //!< t_ref in steps
  };

  template < State_::StateVecElems elem >
  double
  get_y_elem_() const
  {
    return S_.y_[ elem ];
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< aeif_cond_exp > recordablesMap_;
};

inline size_t
aeif_cond_exp::send_test_event( Node& target, size_t receptor_type, synindex, bool )
{
  SpikeEvent e;
  e.set_sender( *this );
  return target.handles_test_event( e, receptor_type );
}

inline size_t
aeif_cond_exp::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
aeif_cond_exp::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
aeif_cond_exp::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
aeif_cond_exp::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
aeif_cond_exp::set_status( const Dictionary& d )
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
