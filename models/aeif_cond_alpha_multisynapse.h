/*
 * aeif_cond_alpha_multisynapse: adaptive exponential integrate-and-fire
 * neuron (Brette & Gerstner 2005) with any number of conductance-based
 * synapses (receptor ports 1..K), each an alpha-function conductance with its
 * own reversal potential and time constant, integrated with GSL's adaptive
 * Runge-Kutta-Fehlberg (4, 5) stepper. nestcl's own NEST-style source (NEST
 * 3.10 names and layout, written for this project from the equations); native
 * reference, and translator input for state vectors whose length depends on
 * the receptor count.
 *
 * Dynamics (V in mV, conductances in nS, currents in pA), k = 1..K:
 *   C_m dV/dt = -g_L (V - E_L) + g_L Delta_T exp((V - V_th)/Delta_T)
 *               + sum_k g_k (E_rev_k - V) - w + I_e + I_stim
 *   tau_w dw/dt = a (V - E_L) - w
 *   d(dg_k)/dt = -dg_k / tau_syn_k
 *   dg_k/dt = dg_k - g_k / tau_syn_k
 * A spike of weight w >= 0 on port k adds w e / tau_syn_k to dg_k, so that
 * g_k peaks at w nS tau_syn_k after the spike; negative weights are refused.
 * With Delta_T = 0 the exponential term is dropped and V_th is the threshold;
 * otherwise a spike is detected when V reaches V_peak. The right-hand side
 * sees V at most V_peak, and V_reset while refractory. Spikes are detected
 * after every internal integration step: V is reset, w grows by b, and the
 * neuron is refractory for t_ref. V_m below -1000 mV or |w| above 1e6 pA
 * after an internal step is reported as a numerical instability.
 *
 * The state vector y_ holds V_M and W, then DG and G for each receptor:
 * NUMBER_OF_FIXED_STATES_ELEMENTS + NUM_STATE_ELEMENTS_PER_RECEPTOR * K
 * doubles, sized in pre_run_hook() as in NEST.
 *
 * Recordables: V_m and w. NEST adds g_1..g_K per node (a
 * DynamicRecordablesMap that grows with the receptor count); the shim's
 * RecordablesMap is one static map per model and cannot name them.
 */
#ifndef AEIF_COND_ALPHA_MULTISYNAPSE_H
#define AEIF_COND_ALPHA_MULTISYNAPSE_H

#include <vector>

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
 * Right-hand side of the ODE system for GSL (C linkage: GSL calls it through
 * a function pointer). pnode points to the node being integrated.
 */
extern "C" int aeif_cond_alpha_multisynapse_dynamics( double, const double y[], double f[], void* pnode );

void register_aeif_cond_alpha_multisynapse( const std::string& name );

class aeif_cond_alpha_multisynapse : public ArchivingNode
{
public:
  aeif_cond_alpha_multisynapse();
  aeif_cond_alpha_multisynapse( const aeif_cond_alpha_multisynapse& );
  ~aeif_cond_alpha_multisynapse() override;

  // The right-hand side reads P_, S_ and B_ like a member function.
  friend int aeif_cond_alpha_multisynapse_dynamics( double, const double*, double*, void* );

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
    return "aeif_cond_alpha_multisynapse";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( const Time&, const long, const long ) override;

  friend class RecordablesMap< aeif_cond_alpha_multisynapse >;
  friend class UniversalDataLogger< aeif_cond_alpha_multisynapse >;

  struct Parameters_
  {
    double V_peak_;  //!< Spike detection threshold in mV (Delta_T > 0)
    double V_reset_; //!< Reset potential in mV
    double t_ref_;   //!< Refractory period in ms

    double g_L;     //!< Leak conductance in nS
    double C_m;     //!< Membrane capacitance in pF
    double E_L;     //!< Leak reversal (resting) potential in mV
    double Delta_T; //!< Slope factor of the spike initiation in mV
    double tau_w;   //!< Adaptation time constant in ms
    double a;       //!< Subthreshold adaptation in nS
    double b;       //!< Spike-triggered adaptation in pA
    double V_th;    //!< Spike initiation threshold in mV

    std::vector< double > tau_syn; //!< Conductance time constant of each receptor in ms
    std::vector< double > E_rev;   //!< Reversal potential of each receptor in mV

    double I_e; //!< Constant external current in pA

    double gsl_error_tol; //!< Absolute and relative error bound of the GSL integrator

    //! Set once a connection targets the node: the receptor count may then not shrink
    bool has_connections_;

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );

    //! The number of receptor ports
    inline size_t
    n_receptors() const
    {
      return E_rev.size();
    }
  };

public:
  struct State_
  {
    /*
     * Indices into y_: V_M and W once, DG and G repeated for every receptor
     * (receptor k at DG + NUM_STATE_ELEMENTS_PER_RECEPTOR * k and G + ...).
     */
    enum StateVecElems
    {
      V_M = 0,
      W,
      DG,
      G,
      STATE_VECTOR_MIN_SIZE
    };

    static const size_t NUMBER_OF_FIXED_STATES_ELEMENTS = 2; // V_M, W
    static const size_t NUM_STATE_ELEMENTS_PER_RECEPTOR = 2; // DG, G

    std::vector< double > y_; //!< The integrated variables
    int r_;                   //!< Refractory steps left

    State_( const Parameters_& );

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

  struct Buffers_
  {
    Buffers_( aeif_cond_alpha_multisynapse& );
    Buffers_( const Buffers_&, aeif_cond_alpha_multisynapse& );

    UniversalDataLogger< aeif_cond_alpha_multisynapse > logger_;

    //! Summed spike weights per receptor and step; summed currents per step
    std::vector< RingBuffer > spikes_;
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
    //! Jump of dg_k per unit weight: e / tau_syn_k, so that g_k peaks at the weight
    std::vector< double > g0_;

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

  static RecordablesMap< aeif_cond_alpha_multisynapse > recordablesMap_;
};

inline size_t
aeif_cond_alpha_multisynapse::send_test_event( Node& target, size_t receptor_type, synindex, bool )
{
  SpikeEvent e;
  e.set_sender( *this );
  return target.handles_test_event( e, receptor_type );
}

inline size_t
aeif_cond_alpha_multisynapse::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
aeif_cond_alpha_multisynapse::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
aeif_cond_alpha_multisynapse::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}
}  // namespace nest

#endif
