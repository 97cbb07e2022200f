/*
 * Static synapses and poisson_generators onto a stream thread's device
 * neurons, exported from NEST's connectors in prepare(): each source's run of
 * connections becomes one device CSR row (delivered by nestcl_delivery.cpp),
 * and a generator whose connections all reach device neurons is drawn on the
 * device. Whatever does not fit stays with NEST's connectors.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_manager_impl.h"

#include <map>

#include "connection_manager_impl.h"
#include "connector_base.h"
#include "connector_model.h"
#include "dictionary.h"
#include "event_delivery_manager_impl.h"
#include "kernel_manager.h"
#include "static_synapse.h"
#include "static_synapse_hom_w.h"
#include "target_identifier.h"

namespace nest
{
#ifdef HAVE_NESTCL
/*
 * A spike event that records where a connector would send it instead of
 * calling the receiver's handle(): calling a connector's send() with it walks
 * a source's run of connections exactly as NEST's delivery does and hands out
 * each connection's target, weight, delay and receptor port.
 */
class ExportEvent : public SpikeEvent
{
public:
  struct Hit
  {
    Node* target;
    double weight;
    long delay;
    long rport;
  };
  std::vector< Hit > hits;
  void
  operator()() override
  {
    hits.push_back( { &get_receiver(), get_weight(), get_delay_steps(), static_cast< long >( get_rport() ) } );
  }
};

/* ConnectionManager::connections_ is private; an explicit instantiation may name it (C++17 [temp.spec]). */
struct connections_tag
{
};
auto member( connections_tag );
template struct steal< connections_tag, &ConnectionManager::connections_ >;

std::vector< ConnectorBase* >&
thread_connectors( size_t tid )
{
  return ( kernel().connection_manager.*member( connections_tag {} ) )[ tid ];
}

/* NEST's static synapse types (under any name CopyModel gave them): they only add their weight to the target. */
bool
is_static_connector( const ConnectorBase* c )
{
  return dynamic_cast< const Connector< static_synapse< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse< TargetIdentifierIndex > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierIndex > >* >( c );
}

namespace
{
/* The CSR of one group under construction: rows over all of the thread's device rows. */
struct Csr
{
  std::vector< uint64_t > row_ptr { 0 };
  std::vector< uint32_t > target;
  std::vector< double > value;
  std::vector< uint16_t > delay;
};
}

/*
 * Where a connection that the export walked lands on the device: its group,
 * the target code (channel << 24 | index) and the value its spike adds (the
 * model's route_spike of the weight); false when its target is not a device
 * neuron of thread tid, its delay lies outside [min_delay, max_delay] steps
 * (or a 16-bit count), or the model refuses its receptor port.
 */
static bool
place( const ExportEvent::Hit& h, size_t tid, const std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, long min_delay, long max_delay, size_t& g,
  uint32_t& code, double& value )
{
  const size_t tl = h.target->get_thread_lid();
  if ( h.target->get_thread() != tid or tl >= where.size() or where[ tl ].first == 0 or h.delay < min_delay
    or h.delay > max_delay or h.delay > 65535 )
  {
    return false;
  }
  g = where[ tl ].first - 1;
  int ch = -1;
  const Group& gr = groups[ g ];
  if ( gr.model->route_spike( h.weight, h.rport, static_cast< uint32_t >( gr.K ), &ch, &value ) != 0 or ch < 0
    or static_cast< uint32_t >( ch ) >= nestcl_block_channels( gr.block ) )
  {
    return false;
  }
  code = ( static_cast< uint32_t >( ch ) << 24 ) | where[ tl ].second;
  return true;
}

/*
 * Thread tid's static synapses onto its device neurons become device CSR rows:
 * for every synapse model whose connections on the thread all target device
 * neurons, each source's run of lcids (one row) is walked by the connector's
 * own send() with an ExportEvent. A model with another target, a receptor the
 * model refuses, a delay outside the ring or a weight_recorder stays with NEST.
 */
void
export_synapses( size_t tid, std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  std::vector< SynRows >& out, long& n_syn )
{
  out.clear();
  n_syn = 0;
  std::vector< ConnectorBase* >& conns = thread_connectors( tid );
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const long min_delay = kernel().connection_manager.get_min_delay();
  const long max_delay = kernel().connection_manager.get_max_delay();
  std::vector< Csr > csr( groups.size() );
  uint32_t rows = 0;
  ExportEvent ev;
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or not is_static_connector( c )
      or cm[ syn_id ]->get_common_properties().get_weight_recorder() )
    {
      continue;
    }
    std::vector< Csr > mine( groups.size() );  // this model's rows, kept only if every synapse fits
    SynRows sr;
    sr.syn_id = static_cast< synindex >( syn_id );
    sr.base = rows;
    bool fits = true;
    long count = 0;
    for ( size_t lcid = 0; lcid < c->size() and fits; )
    {
      ev.hits.clear();
      ev.set_port( lcid );
      c->send( tid, lcid, cm, ev );
      const size_t next = ev.get_port() + 1;  // send() sets the port of every connection of the run
      sr.starts.push_back( lcid );
      for ( const ExportEvent::Hit& h : ev.hits )
      {
        size_t g = 0;
        uint32_t code = 0;
        double value = 0;
        if ( not place( h, tid, groups, where, min_delay, max_delay, g, code, value ) )
        {
          fits = false;
          break;
        }
        Csr& r = mine[ g ];
        r.target.push_back( code );
        r.value.push_back( value );
        r.delay.push_back( static_cast< uint16_t >( h.delay ) );
      }
      for ( Csr& r : mine )
      {
        r.row_ptr.push_back( r.target.size() );
      }
      count += static_cast< long >( ev.hits.size() );
      lcid = next;
    }
    if ( not fits )
    {
      continue;
    }
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      const uint64_t off = csr[ g ].target.size();
      for ( size_t k = 1; k < mine[ g ].row_ptr.size(); ++k )
      {
        csr[ g ].row_ptr.push_back( off + mine[ g ].row_ptr[ k ] );
      }
      csr[ g ].target.insert( csr[ g ].target.end(), mine[ g ].target.begin(), mine[ g ].target.end() );
      csr[ g ].value.insert( csr[ g ].value.end(), mine[ g ].value.begin(), mine[ g ].value.end() );
      csr[ g ].delay.insert( csr[ g ].delay.end(), mine[ g ].delay.begin(), mine[ g ].delay.end() );
    }
    rows += static_cast< uint32_t >( sr.starts.size() );
    n_syn += count;
    out.push_back( std::move( sr ) );
  }
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    if ( rows )
    {
      check( nestcl_block_set_synapses( groups[ g ].block, rows, csr[ g ].row_ptr.data(), csr[ g ].target.data(),
               csr[ g ].value.data(), csr[ g ].delay.data() ),
        "placing the synapses of " + std::string( groups[ g ].name ) + " on the device" );
    }
  }
}

/*
 * nestcl_device_poisson: each poisson_generator replica of thread tid that
 * runs unchanged for the whole simulation (origin 0, start 0, stop infinite)
 * and whose connections on the thread all reach device neurons is drawn on the
 * device instead; NEST's loop then skips the replica. Returns how many moved.
 */
long
export_generators( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, std::vector< char >& skip )
{
  long moved = 0;
  const long max_delay = kernel().connection_manager.get_max_delay();
  const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
  ExportEvent ev;
  for ( auto it = local.begin(); it != local.end(); ++it )
  {
    Node* node = it->get_node();
    if ( node->has_proxies() or node->get_name() != "poisson_generator" or node->is_frozen() )
    {
      continue;
    }
    Dictionary st;
    node->get_status( st );
    const double rate = st.get< double >( "rate" );
    if ( st.get< double >( "origin" ) != 0.0 or st.get< double >( "start" ) != 0.0
      or st.get< double >( "stop" ) < Time::pos_inf().get_ms()
      or ( st.known( "stimulus_source" ) and not st.get< std::string >( "stimulus_source" ).empty() ) )
    {
      continue;  // a stimulation window: NEST's own generator keeps it exact
    }
    ev.hits.clear();
    kernel().connection_manager.send_from_device( tid, node->get_local_device_id(), ev );
    std::vector< std::vector< uint32_t > > target( groups.size() ), salt( groups.size() );
    std::vector< std::vector< double > > value( groups.size() );
    std::vector< std::vector< uint16_t > > delay( groups.size() );
    std::map< size_t, uint32_t > seen;  // target lid -> connections so far (multapses draw apart)
    bool fits = true;
    for ( const ExportEvent::Hit& h : ev.hits )
    {
      size_t g = 0;
      uint32_t code = 0;
      double v = 0;
      // A generator's delay may be any step count the ring holds (from 1 on; NEST's min_delay counts it too).
      if ( not place( h, tid, groups, where, 1, max_delay, g, code, v ) )
      {
        fits = false;
        break;
      }
      const uint32_t dup = seen[ h.target->get_thread_lid() ]++;
      target[ g ].push_back( code );
      value[ g ].push_back( v );
      delay[ g ].push_back( static_cast< uint16_t >( h.delay ) );
      salt[ g ].push_back( static_cast< uint32_t >( node->get_node_id() + 7919u * dup ) & 0xffffffu );
    }
    if ( not fits or ev.hits.empty() )
    {
      continue;
    }
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      check( nestcl_block_add_poisson( groups[ g ].block, rate, static_cast< uint32_t >( target[ g ].size() ),
               target[ g ].data(), value[ g ].data(), delay[ g ].data(), salt[ g ].data() ),
        "placing poisson_generator " + std::to_string( node->get_node_id() ) + " on the device" );
    }
    if ( node->get_thread_lid() < skip.size() )
    {
      skip[ node->get_thread_lid() ] = 1;
    }
    ++moved;
  }
  return moved;
}
#endif
}
