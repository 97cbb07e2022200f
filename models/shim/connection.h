/*
 * nestcl's NEST-API shim: the base of synapse models. Connection< T > holds
 * what every synapse has (its target through a target identifier, the rport,
 * the delay) and gives it to the model through get_target(), get_rport(),
 * get_delay() and get_delay_steps(), as NEST's nestkernel/connection.h does;
 * the two target identifiers are NEST's (a pointer and rport, or the
 * thread-local index of the _hpc variants, rport 0). CommonSynapseProperties
 * is the base of a model's properties shared by all its synapses. Synapse
 * models written against this header compile unchanged against NEST's.
 */
#ifndef CONNECTION_H
#define CONNECTION_H

#include <cstddef>
#include <vector>

#include "dictionary.h"
#include "event.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "nest_names.h"
#include "nest_time.h"
#include "nest_types.h"
#include "node.h"

namespace nest
{
class ConnectorModel
{
};

/* What a connection model declares about itself (NEST's ConnectionModelProperties). */
enum class ConnectionModelProperties : unsigned
{
  NONE = 0,
  HAS_DELAY = 1u << 0,
  IS_PRIMARY = 1u << 1,
  SUPPORTS_HPC = 1u << 2,
  SUPPORTS_LBL = 1u << 3,
  SUPPORTS_WFR = 1u << 4,
  REQUIRES_SYMMETRIC = 1u << 5,
  REQUIRES_CLOPATH_ARCHIVING = 1u << 6,
  REQUIRES_URBANCZIK_ARCHIVING = 1u << 7
};

constexpr ConnectionModelProperties
operator|( ConnectionModelProperties a, ConnectionModelProperties b )
{
  return static_cast< ConnectionModelProperties >( static_cast< unsigned >( a ) | static_cast< unsigned >( b ) );
}

/* The dummy target a connection is tested against before it is made. */
class ConnTestDummyNodeBase : public Node
{
public:
  void
  pre_run_hook() override
  {
  }
  void
  update( Time const&, const long, const long ) override
  {
  }
};

/* The properties all synapses of a model share; a model's own class derives from it. */
class CommonSynapseProperties
{
public:
  CommonSynapseProperties() = default;
  void
  get_status( Dictionary& ) const
  {
  }
  void
  set_status( const Dictionary&, ConnectorModel& )
  {
  }
};

/* The target as a pointer and an rport. */
class TargetIdentifierPtrRport
{
public:
  void
  set_target( Node* target )
  {
    target_ = target;
  }
  Node*
  get_target_ptr( const size_t ) const
  {
    return target_;
  }
  size_t
  get_rport() const
  {
    return rport_;
  }
  void
  set_rport( size_t rprt )
  {
    rport_ = rprt;
  }

private:
  Node* target_ = nullptr;
  size_t rport_ = 0;
};

/* The target as an index into the thread's nodes (the _hpc variants); rport 0 only. */
class TargetIdentifierIndex
{
public:
  void
  set_target( Node* target )
  {
    for ( size_t k = 0; k < local_nodes().size(); ++k )
    {
      if ( local_nodes()[ k ] == target )
      {
        target_ = k;
        return;
      }
    }
    local_nodes().push_back( target );
    target_ = local_nodes().size() - 1;
  }
  Node*
  get_target_ptr( const size_t ) const
  {
    return local_nodes()[ target_ ];
  }
  size_t
  get_rport() const
  {
    return 0;
  }
  void
  set_rport( size_t rprt )
  {
    if ( rprt != 0 )
    {
      throw IllegalConnection( "Only rport==0 allowed for HPC synapses. Use normal synapse models instead." );
    }
  }

private:
  /* The shim runs one thread: its nodes by index. */
  static std::vector< Node* >&
  local_nodes()
  {
    static std::vector< Node* > nodes;
    return nodes;
  }
  size_t target_ = 0;
};

template < typename targetidentifierT >
class Connection
{
public:
  Connection() = default;

  double
  get_delay() const
  {
    return Time::delay_steps_to_ms( delay_steps_ );
  }
  long
  get_delay_steps() const
  {
    return delay_steps_;
  }
  void
  set_delay( const double delay )
  {
    delay_steps_ = Time::delay_ms_to_steps( delay );
  }
  void
  set_delay_steps( const long delay )
  {
    delay_steps_ = delay;
  }
  Node*
  get_target( const size_t tid ) const
  {
    return target_.get_target_ptr( tid );
  }
  size_t
  get_rport() const
  {
    return target_.get_rport();
  }
  void
  set_target( Node& target, size_t rport )
  {
    target_.set_target( &target );
    target_.set_rport( rport );
  }
  void
  get_status( Dictionary& d ) const
  {
    d[ names::delay ] = get_delay();
  }
  void
  set_status( const Dictionary& d, ConnectorModel& )
  {
    double delay;
    if ( d.update_value( names::delay, delay ) )
    {
      set_delay( delay );
    }
  }

protected:
  /* NEST checks the pairing of event types here; the shim only records the target. */
  void
  check_connection_( Node&, Node&, Node& target, const size_t receptor_type )
  {
    set_target( target, receptor_type );
  }

private:
  targetidentifierT target_;
  long delay_steps_ = 1;
};
}  // namespace nest

#endif
