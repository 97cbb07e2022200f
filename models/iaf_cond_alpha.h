/*
 * iaf_cond_alpha: leaky integrate-and-fire neuron with conductance-based
 * synapses whose conductances follow alpha functions, integrated with GSL's
 * adaptive Runge-Kutta-Fehlberg (4, 5) stepper. nestcl's own NEST-style source
 * (NEST 3.10 names and layout, written for this project from the equations);
 * native reference, and translator input once the translator handles the GSL
 * models.
 *
 * Dynamics (V in mV, conductances in nS, currents in pA):
 *   C_m dV/dt = -g_L (V - E_L) - g_ex (V - E_ex) - g_in (V - E_in) + I_stim + I_e
 *   d(dg_X)/dt = -dg_X / tau_syn_X,   dg_X/dt = dg_X - g_X / tau_syn_X
 * A spike of weight w > 0 adds w e / tau_syn_ex to dg_ex (a weight of 1 gives a
 * conductance peak of 1 nS, tau_syn_ex after the spike); w < 0 adds
 * |w| e / tau_syn_in to dg_in. In the right-hand side V is held at V_reset while
 * refractory and never taken above V_th. A spike is emitted at the end of a
 * step with V >= V_th; V is then reset and clamped for t_ref.
 *
 * The state is a C array (State_::y) indexed by State_::StateVecElems, as GSL
 * needs; iaf_cond_alpha_dynamics() is the right-hand side GSL calls through
 * B_.sys_, with the node passed as its params pointer.
 */
#ifndef IAF_COND_ALPHA_H
#define IAF_COND_ALPHA_H

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
 * pnode points to the iaf_cond_alpha being integrated.
 */
extern "C" int iaf_cond_alpha_dynamics( double, const double y[], double f[], void* pnode );

void register_iaf_cond_alpha( const std::string& name );

class iaf_cond_alpha : public ArchivingNode
{
public:
  iaf_cond_alpha();
  iaf_cond_alpha( const iaf_cond_alpha& );
  ~iaf_cond_alpha() override;

  using Node::handle;
  using Node::handles_test_event;

  size_t send_test_event( Node&, size_t, synindex, bool ) override;

  size_t handles_test_event( SpikeEvent&, size_t ) override;
  size_t handles_test_event( CurrentEvent&, size_t ) override;
  size_t handles_test_event( DataLoggingRequest&, size_t ) override;

  void handle( SpikeEvent& ) override;
  void handle( CurrentEvent& ) override;
  void handle( DataLoggingRequest& ) override;

  void get_status( Dictionary& ) const override;
  void set_status( const Dictionary& ) override;

  std::string
  get_name() const override
  {
    return "iaf_cond_alpha";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  // The right-hand side reads P_, S_ and B_ like a member function.
  friend int iaf_cond_alpha_dynamics( double, const double*, double*, void* );

  friend class RecordablesMap< iaf_cond_alpha >;
  friend class UniversalDataLogger< iaf_cond_alpha >;

  struct Parameters_
  {
    double V_th;     //!< Spike threshold in mV
    double V_reset;  //!< Reset potential in mV
    double t_ref;    //!< Refractory period in ms
    double g_L;      //!< Leak conductance in nS
    double C_m;      //!< Membrane capacitance in pF
    double E_ex;     //!< Excitatory reversal potential in mV
    double E_in;     //!< Inhibitory reversal potential in mV
    double E_L;      //!< Leak reversal (resting) potential in mV
    double tau_synE; //!< Excitatory alpha-function time constant in ms
    double tau_synI; //!< Inhibitory alpha-function time constant in ms
    double I_e;      //!< Constant external current in pA

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

public:
  struct State_
  {
    //! Indices into the state vector y
    enum StateVecElems
    {
      V_M = 0,
      DG_EXC,
      G_EXC,
      DG_INH,
      G_INH,
      STATE_VEC_SIZE
    };

    //! The integrated variables; a plain C array, as GSL requires
    double y[ STATE_VEC_SIZE ];

    //! Refractory steps left
    int r;

    State_( const Parameters_& );
    State_( const State_& );

    State_& operator=( const State_& );

    void get( Dictionary& ) const;
    void set( const Dictionary&, const Parameters_&, Node* );
  };

private:
  struct Buffers_
  {
    Buffers_( iaf_cond_alpha& );
    Buffers_( const Buffers_&, iaf_cond_alpha& );

    UniversalDataLogger< iaf_cond_alpha > logger_;

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
    double PSConInit_E; //!< Jump of dg_ex per unit weight: e / tau_syn_ex
    double PSConInit_I; //!< Jump of dg_in per unit weight: e / tau_syn_in

    int RefractoryCounts; //!< t_ref in steps
  };

  template < State_::StateVecElems elem >
  double
  get_y_elem_() const
  {
    return S_.y[ elem ];
  }

  double
  get_r_() const
  {
    return Time::get_resolution().get_ms() * S_.r;
  }

  Parameters_ P_;
  State_ S_;
  Variables_ V_;
  Buffers_ B_;

  static RecordablesMap< iaf_cond_alpha > recordablesMap_;
};

inline size_t
iaf_cond_alpha::send_test_event( Node& target, size_t receptor_type, synindex, bool )
{
  SpikeEvent e;
  e.set_sender( *this );
  return target.handles_test_event( e, receptor_type );
}

inline size_t
iaf_cond_alpha::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_cond_alpha::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
iaf_cond_alpha::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
iaf_cond_alpha::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
iaf_cond_alpha::set_status( const Dictionary& d )
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
