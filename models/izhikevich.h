/*
 * izhikevich: the simple spiking neuron of Izhikevich (2003),
 *   dv/dt = 0.04 v^2 + 5 v + 140 - u + I,  du/dt = a (b v - u),
 *   v >= V_th: v = c, u = u + d,
 * integrated with forward Euler on the time grid: by default both variables
 * from the values at the start of the step (consistent_integration), or with
 * the two half-steps of v of the original publication, which assumes a
 * resolution of 1 ms (NEST merely logs a hint otherwise; this model leaves
 * the choice to the user and set_status() independent of the resolution, so
 * that it translates to a host helper without it). A spike of weight w
 * makes v jump by w mV. nestcl's own NEST-style source (NEST 3.10 names and
 * layout, written for this project); translator input and native reference.
 * It has no Variables_: nothing is precomputed.
 */
#ifndef IZHIKEVICH_H
#define IZHIKEVICH_H

#include "archiving_node.h"
#include "connection.h"
#include "event.h"
#include "nest_types.h"
#include "ring_buffer.h"
#include "universal_data_logger.h"

namespace nest
{
void register_izhikevich( const std::string& name );

class izhikevich : public ArchivingNode
{
public:
  izhikevich();
  izhikevich( const izhikevich& );

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
    return "izhikevich";
  }

private:
  void init_buffers_() override;
  void pre_run_hook() override;
  void update( Time const&, const long, const long ) override;

  friend class RecordablesMap< izhikevich >;
  friend class UniversalDataLogger< izhikevich >;

  struct Parameters_
  {
    double a_;
    double b_;
    double c_; //!< Reset value of v in mV
    double d_; //!< Increment of u at a spike

    double I_e_;  //!< Constant external current
    double V_th_; //!< Spike threshold in mV
    double V_min_; //!< Lower bound of v in mV

    bool consistent_integration_; //!< Euler step from the start-of-step values

    Parameters_();

    void get( Dictionary& ) const;
    void set( const Dictionary&, Node* node );
  };

  struct State_
  {
    double v_; //!< Membrane potential in mV
    double u_; //!< Recovery variable
    double I_; //!< Input current, applied in the next step

    State_();

    void get( Dictionary&, const Parameters_& ) const;
    void set( const Dictionary&, const Parameters_&, Node* );
  };

  struct Buffers_
  {
    Buffers_( izhikevich& );
    Buffers_( const Buffers_&, izhikevich& );

    RingBuffer spikes_;
    RingBuffer currents_;

    UniversalDataLogger< izhikevich > logger_;
  };

  double
  get_V_m_() const
  {
    return S_.v_;
  }
  double
  get_U_m_() const
  {
    return S_.u_;
  }

  Parameters_ P_;
  State_ S_;
  Buffers_ B_;

  static RecordablesMap< izhikevich > recordablesMap_;
};

inline size_t
izhikevich::handles_test_event( SpikeEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
izhikevich::handles_test_event( CurrentEvent&, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return 0;
}

inline size_t
izhikevich::handles_test_event( DataLoggingRequest& dlr, size_t receptor_type )
{
  if ( receptor_type != 0 )
  {
    throw UnknownReceptorType( receptor_type, get_name() );
  }
  return B_.logger_.connect_logging_device( dlr, recordablesMap_ );
}

inline void
izhikevich::get_status( Dictionary& d ) const
{
  P_.get( d );
  S_.get( d, P_ );
  ArchivingNode::get_status( d );
  d[ names::recordables ] = recordablesMap_.get_list();
}

inline void
izhikevich::set_status( const Dictionary& d )
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
