/*
 * hh_psc_alpha: Hodgkin-Huxley neuron (sodium, potassium and leak currents,
 * the squid-axon rate functions shifted to a resting potential of -65 mV)
 * with alpha-shaped postsynaptic currents, integrated with GSL's adaptive
 * Runge-Kutta-Fehlberg (4, 5) stepper. nestcl's own NEST-style source (NEST
 * 3.10 names and layout, written for this project from the equations); native
 * reference, and translator input once the translator handles the GSL models.
 *
 * Dynamics (V in mV, conductances in nS, currents in pA, t in ms):
 *   C_m dV/dt = -g_Na m^3 h (V - E_Na) - g_K n^4 (V - E_K) - g_L (V - E_L)
 *               + I_ex + I_in + I_stim + I_e
 *   dx/dt = alpha_x(V) (1 - x) - beta_x(V) x   for x = m, h, n
 *     alpha_n = 0.01 (V + 55) / (1 - exp(-(V + 55)/10)),  beta_n = 0.125 exp(-(V + 65)/80)
 *     alpha_m = 0.1 (V + 40) / (1 - exp(-(V + 40)/10)),   beta_m = 4 exp(-(V + 65)/18)
 *     alpha_h = 0.07 exp(-(V + 65)/20),                   beta_h = 1 / (1 + exp(-(V + 35)/10))
 *   d(dI_X)/dt = -dI_X / tau_syn_X,   dI_X/dt = dI_X - I_X / tau_syn_X
 * A spike of weight w (pA; negative for inhibition) adds w e / tau_syn_X to
 * dI_X, so that the current peaks at w pA, tau_syn_X after the spike. A spike is
 * emitted at the end of a step in which V is at or above 0 mV and has fallen
 * (the step after the action potential's peak), unless within t_ref of the
 * previous one; V itself is never reset.
 */
#ifndef HH_PSC_ALPHA_H
#define HH_PSC_ALPHA_H

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv.h>
#include <gsl/gsl_sf_exp.h>

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
 * pnode points to the hh_psc_alpha being integrated.
 */
extern "C" int hh_psc_alpha_dynamics( double, const double y[], double f[], void* pnode );

void register_hh_psc_alpha( const std::string& name );

class hh_psc_alpha : public ArchivingNode
{
public:
  hh_psc_alpha();
  hh_psc_alpha( const hh_psc_alpha& );
  ~hh_psc_alpha() override;

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
    return "hh_psc_alpha";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  // The right-hand side reads P_, S_ and B_ like a member function.
  friend int hh_psc_alpha_dynamics( double, const double*, double*, void* );

  friend class RecordablesMap< hh_psc_alpha >;
  friend class UniversalDataLogger< hh_psc_alpha >;

  struct Parameters_
  {
    double t_ref_;   //!< Refractory period (no spike is emitted) in ms
    double g_Na;     //!< Peak sodium conductance in nS
    double g_K;      //!< Peak potassium conductance in nS
    double g_L;      //!< Leak conductance in nS
    double C_m;      //!< Membrane capacitance in pF
    double E_Na;     //!< Sodium reversal potential in mV
    double E_K;      //!< Potassium reversal potential in mV
    double E_L;      //!< Leak reversal potential in mV
    double tau_synE; //!< Excitatory alpha-current time constant in ms
    double tau_synI; //!< Inhibitory alpha-current time constant in ms
    double I_e;      //!< Constant external current in pA

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
      HH_M,
      HH_H,
      HH_N,
      DI_EXC,
      I_EXC,
      DI_INH,
      I_INH,
      STATE_VEC_SIZE
    };

    //! The integrated variables; a plain C array, as GSL requires
    double y_[ STATE_VEC_SIZE ];
    int r_; //!< Refractory steps left

    State_( const Parameters_& );
    State_( const State_& );

    State_& operator=( const State_& );

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

private:
  struct Buffers_
  {
    Buffers_( hh_psc_alpha& );
    Buffers_( const Buffers_&, hh_psc_alpha& );

    UniversalDataLogger< hh_psc_alpha > logger_;

    //! Summed spike weights (excitatory and, negative, inhibitory) and currents per step
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
    double PSCurrInit_E_; //!< Jump of dI_ex per unit weight: e / tau_syn_ex
    double PSCurrInit_I_; //!< Jump of dI_in per unit weight: e / tau_syn_in

    int RefractoryCounts_; //!< t_ref in steps
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

  static RecordablesMap< hh_psc_alpha > recordablesMap_;
};

inline size_t
hh_psc_alpha::send_test_event( Node& target, size_t receptor_type, synindex, bool )
{
  SpikeEvent e;
  e.set_sender( *this );
  return target.handles_test_event( e, receptor_type );
}

inline size_t
hh_psc_alpha::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
hh_psc_alpha::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
hh_psc_alpha::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
hh_psc_alpha::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
hh_psc_alpha::set_status( const Dictionary& d )
{
  Parameters_ ptmp = P_;
  ptmp.set( d, this );
  State_ stmp = S_;
  stmp.set( d, this );
  ArchivingNode::set_status( d );
  P_ = ptmp;
  S_ = stmp;
}
}  // namespace nest

#endif
