/*
 * nestcl inside NEST (nest_patch): kernel status keys, the packing of stream
 * threads' neurons into device blocks, and their update (nestcl_manager.h).
 * Compiled into NEST's nestkernel; with -Dwith-nestcl=<prefix> it links the
 * installed libnestcl and the models that nestcl-translate translated from
 * NEST's own models/ at configure time (HAVE_NESTCL). Without it the keys exist
 * and nestcl_streams can only be 0.
 */
#include "nestcl/nestcl_manager.h"
#include "nestcl/nestcl_placement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "connection_manager_impl.h"
#include "connector_base.h"
#include "connector_model.h"
#include "dictionary.h"
#include "event_delivery_manager_impl.h"
#include "exceptions.h"
#include "kernel_manager.h"
#include "logging.h"

#ifdef HAVE_NESTCL
#include "archiving_node.h"
#include "nestcl/block.h"
#include "nestcl/device.h"
#ifdef HAVE_NESTCL_PERFMODEL
#include "nestcl/pm_model.h"
#endif
#include "nestcl_cpu_only.hpp"
#include "nestcl_glue_table.hpp"
#include "nestcl_syn_glue_table.hpp"
#include "static_synapse.h"
#include "static_synapse_hom_w.h"
#include "target_identifier.h"
#include "universal_data_logger_impl.h"
#endif

namespace nest
{
namespace
{
const std::string KEY_STREAMS = "nestcl_streams";
const std::string KEY_FRACTION = "nestcl_gpu_fraction";
const std::string KEY_FRACTION_SOURCE = "nestcl_gpu_fraction_source";
const std::string KEY_PREDICTED_WALL = "nestcl_predicted_wall";
const std::string KEY_MEASURED_WALL = "nestcl_measured_wall";
const std::string KEY_RECOMMENDED = "nestcl_recommended_gpu_fraction";
const std::string KEY_RECOMMENDED_WALL = "nestcl_recommended_wall";
const std::string KEY_DEVICE = "nestcl_device";
const std::string KEY_DEVICE_NAME = "nestcl_device_name";
const std::string KEY_DEVICE_BYTES = "nestcl_device_bytes";
const std::string KEY_MODELS = "nestcl_translated_models";
const std::string KEY_TIME_UPDATE = "nestcl_time_update";
const std::string KEY_TIME_STAGE = "nestcl_time_stage";
const std::string KEY_TIME_EMIT = "nestcl_time_emit";
const std::string KEY_TIME_DELIVER = "nestcl_time_deliver";
const std::string KEY_DEVICE_POISSON = "nestcl_device_poisson";
const std::string KEY_DEVICE_SYNAPSES = "nestcl_device_synapses";
const std::string KEY_DEVICE_PLASTIC = "nestcl_device_plastic_synapses";
const std::string KEY_DEVICE_GENERATORS = "nestcl_device_generators";
const std::string KEY_LAUNCHES = "nestcl_launches";
const std::string KEY_WAITS = "nestcl_waits";
const std::string KEY_SLICES = "nestcl_slices";
const std::string KEY_NODES = "nestcl_nodes";
const std::string KEY_MIN_WORK = "nestcl_device_min_work";
// Neuron-steps per slice below which a stream VP runs its translated neurons' C loops on its own thread: on
// the H200 a slice's launch and wait cost ~150 us and PoCL's ~120 us, while a neuron-step of the C loop
// takes 0.03-2 us (iaf_psc_alpha to aeif/hh with RKF45): below 64 the thread is never much slower, and for
// a few neurons with a one-step min delay (NEST's precise-spike accuracy tests) ~50 times faster.
const long DEFAULT_MIN_WORK = 64;
}

#ifdef HAVE_NESTCL
/* One entry of a block's spike list: the neuron, the lag and the entry's position in the list. */
struct SortedSpike
{
  uint32_t index, lag, at;
};

/* The neurons of one model (and receptor count) of one stream thread. */
struct Group
{
  const nestcl_glue::entry* glue = nullptr;
  size_t K = 0;
  std::vector< Node* > nodes; // node ids first, first + stride, ... (a block's random streams follow them)
  size_t stride = 0;
  nestcl_block* block = nullptr;
};

/* The device rows of one synapse model on one thread: row base + k for the run of lcids starting at starts[k]. */
struct SynRows
{
  synindex syn_id = 0;
  std::vector< size_t > starts;
  uint32_t base = 0;
};

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
template < typename Tag, auto Member >
struct steal
{
  friend auto
  member( Tag )
  {
    return Member;
  }
};
template struct steal< connections_tag, &ConnectionManager::connections_ >;
#endif

#ifdef HAVE_NESTCL
/*
 * ArchivingNode keeps the spike history private (set_spiketime is protected);
 * the device's copy is loaded from and written back into these members.
 */
struct an_history_tag
{
};
struct an_kminus_tag
{
};
struct an_kminus_triplet_tag
{
};
struct an_last_spike_tag
{
};
struct an_max_delay_tag
{
};
struct an_tau_minus_tag
{
};
struct an_tau_minus_triplet_tag
{
};
struct an_n_incoming_tag
{
};
auto member( an_history_tag );
auto member( an_kminus_tag );
auto member( an_kminus_triplet_tag );
auto member( an_last_spike_tag );
auto member( an_max_delay_tag );
auto member( an_tau_minus_tag );
auto member( an_tau_minus_triplet_tag );
auto member( an_n_incoming_tag );
template struct steal< an_history_tag, &ArchivingNode::history_ >;
template struct steal< an_kminus_tag, &ArchivingNode::Kminus_ >;
template struct steal< an_kminus_triplet_tag, &ArchivingNode::Kminus_triplet_ >;
template struct steal< an_last_spike_tag, &ArchivingNode::last_spike_ >;
template struct steal< an_max_delay_tag, &ArchivingNode::max_delay_ >;
template struct steal< an_tau_minus_tag, &ArchivingNode::tau_minus_ >;
template struct steal< an_tau_minus_triplet_tag, &ArchivingNode::tau_minus_triplet_ >;
template struct steal< an_n_incoming_tag, &ArchivingNode::n_incoming_ >;
/* Whether a node's forced spikes (ignore_and_spike) are on: the device path has the dynamic condition only. */
struct ias_on_tag
{
};
auto member( ias_on_tag );
template struct steal< ias_on_tag, &IgnoreAndSpikeMechanism::ignore_and_spike_ >;

/*
 * The translated (STDP) synapses of one synapse model on one thread: rows as
 * SynRows (row k = the run of lcids from starts[k]), in every group the
 * block's set and the lcids of its synapses in CSR order, and how to write a
 * synapse's state back into its NEST connection.
 */
struct PlasticRows
{
  synindex syn_id = 0;
  std::vector< size_t > starts;
  std::vector< int > set;                   // per group: the block's set, -1 without synapses there
  std::vector< std::vector< size_t > > lcid; // per group, CSR order
  const nestcl_synapse_model* sm = nullptr;
  std::function< void( size_t, const void* ) > unpack; // lcid, struct
};
#endif

struct NestclManager::Impl
{
  long streams = 0;
  std::string device_spec;
  std::string device_name;
  bool probed = false;
  std::string probed_spec, probed_name; // the device that device_spec selects, before any is opened
  bool fraction_auto = true;
  double fraction = 0.0; // as set, when not auto
  // nestcl_gpu_fraction "auto": how the share in force was chosen (choose_split),
  // and after each Simulate what it measured and the share the model recommends.
  bool split_decided = false;
  std::string split_source = "even split";
  double split_alpha = -1.0;            // the share auto placed (< 0: round robin)
  double predicted_wall = NAN;          // s per simulated s, the profile's, at that share
  double measured_wall = NAN;           // s per simulated s, the last Simulate's run
  double recommended = NAN, recommended_wall = NAN;
  double run_wall0 = 0.0, run_t0_ms = 0.0; // when the last Simulate's run began
  double busy0 = 0.0;                    // the streams' busy seconds then
  long neurons = 0;                      // neurons of the network (counted by prepare)
#ifdef HAVE_NESTCL_PERFMODEL
  // The device's profile, looked up once per ResetKernel or device change (-1: not yet; else NESTCL_PM_*).
  int profile_state = -1;
  nestcl_pm_profile profile;
  std::string profile_path, profile_why;
#endif
  bool device_poisson = false;
  long min_work = DEFAULT_MIN_WORK; // nestcl_device_min_work
  std::vector< double > t_update, t_stage, t_emit, t_deliver; // per thread, seconds
  std::vector< long > n_syn, n_gen;                          // per thread: device synapses, device generators
  std::vector< long > n_plastic;                             // per thread: device STDP synapses
  std::vector< long > n_slices;                              // per thread: slices its stream updated
  std::vector< long > n_launches, n_waits;                   // per thread: those of its blocks destroyed so far
  std::vector< std::vector< int > > enq_rc;                  // per thread: each group's enqueue status this slice
  // Per model, the neurons of the last Simulate's stream VPs: how many ran on the device, how many on the
  // host (NEST's own update() there), and why those did (nestcl_nodes).
  struct Placed
  {
    long device = 0, host = 0, c_loop = 0; // c_loop: translated, run by its C loop on the stream VP's thread
    std::map< std::string, long > why;
  };
  std::map< std::string, Placed > placed;
#ifdef HAVE_NESTCL
  nestcl_device* dev = nullptr;
  std::string dev_opened_spec;
  int dev_queues = 0;
  std::vector< std::vector< Group > > groups; // per thread
  // Per thread, in the order of its local neurons: a device group (at its first node) or a neuron that
  // stays on the host. update() runs them in this order, so every spike is sent in NEST's own order.
  struct Step
  {
    long group; // index into groups, or -1 for `node`
    Node* node;
  };
  std::vector< std::vector< Step > > plan;
  std::vector< std::vector< double > > scratch; // per thread: drained channels, then a recorded sample
  std::vector< std::vector< SortedSpike > > sorted; // per thread: a block's spikes in NEST's order
  std::vector< char > record;                   // per thread: a multimeter listens on it
  std::vector< std::vector< SynRows > > syn_rows; // per thread: synapse models delivered on the device
  std::vector< std::vector< PlasticRows > > plastic; // per thread: translated (STDP) synapses on the device
  std::vector< std::vector< uint32_t > > rows, lags; // per thread: received spikes for the device
  std::vector< std::vector< std::vector< uint32_t > > > prows, plags; // per thread, per plastic model
  std::vector< std::vector< std::pair< uint32_t, uint32_t > > > where; // per thread, by thread lid: (group + 1, index)
  // The device rings' input still in flight when a Simulate ends (a partial
  // slice, delays above min_delay), per node id, for the next Simulate's blocks.
  struct Pending
  {
    uint32_t ch;
    int64_t step;
    int64_t value;
  };
  std::map< size_t, std::vector< Pending > > pending;
  std::vector< int64_t > next_step; // per thread: the step its blocks update next
#endif
};

#ifdef HAVE_NESTCL
static void check( int rc, const std::string& what );

/* NEST's static synapse types (under any name CopyModel gave them): they only add their weight to the target. */
static bool
is_static_connector( const ConnectorBase* c )
{
  return dynamic_cast< const Connector< static_synapse< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse< TargetIdentifierIndex > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierPtrRport > >* >( c )
    or dynamic_cast< const Connector< static_synapse_hom_w< TargetIdentifierIndex > >* >( c );
}

/* The CSR of one group under construction: rows over all of the thread's device rows. */
struct Csr
{
  std::vector< uint64_t > row_ptr { 0 };
  std::vector< uint32_t > target;
  std::vector< double > value;
  std::vector< uint16_t > delay;
};

/*
 * Where a connection that the export walked lands on the device: its group,
 * the target code (channel << 24 | index) and the value its spike adds (the
 * model's route_spike of the weight); false when its target is not a device
 * neuron of thread tid, its delay lies outside [min_delay, max_delay] steps
 * (or a 16-bit count), or the model refuses its receptor port.
 */
static bool
place( const ExportEvent::Hit& h,
  size_t tid,
  const std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where,
  long min_delay,
  long max_delay,
  size_t& g,
  uint32_t& code,
  double& value )
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
  if ( gr.glue->model->route_spike( h.weight, h.rport, static_cast< uint32_t >( gr.K ), &ch, &value ) != 0 or ch < 0
    or static_cast< uint32_t >( ch ) >= nestcl_block_channels( gr.block ) )
  {
    return false;
  }
  code = ( static_cast< uint32_t >( ch ) << 24 ) | where[ tl ].second;
  return true;
}

/*
 * Whether the group's model's handle(SpikeEvent&) reads the spike's offset at
 * rport (model.h, route_spike_offset): the device's delivery carries no
 * offset, so such connections stay with NEST, whose handle() reads NEST's.
 * (place() refuses them through route_spike, which fails there.)
 */
static bool
reads_offset( const Group& gr, long rport )
{
  const nestcl_model* m = gr.glue->model;
  int read = 0, ch = -1;
  double value = 0;
  return m->route_spike_offset
    and ( m->route_spike_offset( 1.0, rport, static_cast< uint32_t >( gr.K ), 0.0, &read, &ch, &value ) != 0 or read );
}

/*
 * Thread tid's static synapses onto its device neurons become device CSR rows:
 * for every synapse model whose connections on the thread all target device
 * neurons, each source's run of lcids (one row) is walked by the connector's
 * own send() with an ExportEvent. A model with another target, a receptor the
 * model refuses, a delay outside the ring or a weight_recorder stays with NEST.
 */
static void
export_synapses( size_t tid,
  std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where,
  std::vector< SynRows >& out,
  long& n_syn )
{
  out.clear();
  n_syn = 0;
  auto& conns = ( kernel().connection_manager.*member( connections_tag {} ) )[ tid ];
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const long min_delay = kernel().connection_manager.get_min_delay();
  const long max_delay = kernel().connection_manager.get_max_delay();
  std::vector< Csr > csr( groups.size() );
  uint32_t rows = 0;
  ExportEvent ev;
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or not is_static_connector( c ) or cm[ syn_id ]->get_common_properties().get_weight_recorder() )
    {
      continue;
    }
    std::vector< Csr > mine( groups.size() ); // this model's rows, kept only if every synapse fits
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
      const size_t next = ev.get_port() + 1; // send() sets the port of every connection of the run
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
        "placing the synapses of " + std::string( groups[ g ].glue->name ) + " on the device" );
    }
  }
}

/* Every field of role `role` of two structs equal (bytes). */
static bool
same_role( const nestcl_synapse_model* sm, const unsigned char* a, const unsigned char* b, nestcl_syn_role role )
{
  for ( int f = 0; f < sm->n_syn_fields; ++f )
  {
    const nestcl_syn_field& sf = sm->fields[ f ];
    if ( sf.role == role and std::memcmp( a + sf.offset, b + sf.offset, nestcl_field_type_size( sf.type ) ) != 0 )
    {
      return false;
    }
  }
  return true;
}

/*
 * Thread tid's translated (STDP) synapses onto its device neurons become
 * device sets (nestcl_block_add_plastic), their targets' spike histories
 * device copies of the nodes' ArchivingNode histories. A connector qualifies
 * when all its connections target device neurons of the thread, with one
 * receptor port, no weight_recorder, per-source state equal within each
 * source's run and parameters equal over all. The thread's synapses go to the
 * device only all together: every device neuron that an STDP synapse reads
 * must have all of them there (its n_incoming), one tau_minus per block;
 * otherwise all stay with NEST.
 */
/*
 * Whether the device delivers a translated synapse model: its set needs a
 * per-synapse double "weight" that send() updates (plastic_dev.c); one that
 * sends with a weight it does not keep per synapse (tsodyks_synapse) stays
 * with NEST's connectors.
 */
static bool
device_deliverable( const nestcl_synapse_model* sm )
{
  for ( int f = 0; f < sm->n_syn_fields; ++f )
  {
    const nestcl_syn_field& sf = sm->fields[ f ];
    if ( sf.role == NESTCL_SYN_STATE and sf.type == NESTCL_T_DOUBLE and sf.nest_name
      and std::strcmp( sf.nest_name, "weight" ) == 0 )
    {
      return true;
    }
  }
  return false;
}

/*
 * Whether the device's plastic delivery can reach a group's neurons at rport:
 * it adds the synapse's weight unchanged to one channel per sign of the weight
 * (as plastic_dev.c's eng_plastic_route checks). A port that the model's
 * handle() treats otherwise (parrot_neuron's rport 1, which repeats nothing)
 * keeps the synapses with NEST.
 */
static bool
plastic_routable( const Group& gr, long rport )
{
  return nestcl_block_plastic_routable( gr.block, rport ) != 0;
}

static long
export_plastic( size_t tid,
  std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where,
  std::vector< PlasticRows >& out )
{
  out.clear();
  auto& conns = ( kernel().connection_manager.*member( connections_tag {} ) )[ tid ];
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const long max_delay = kernel().connection_manager.get_max_delay();
  struct Csr
  {
    std::vector< uint64_t > row_ptr { 0 };
    std::vector< uint32_t > target;
    std::vector< uint16_t > delay;
    std::vector< unsigned char > syn;
  };
  struct Model
  {
    PlasticRows rows;
    std::vector< Csr > csr; // per group
    std::vector< unsigned char > cp;
    long rport = 0;
  };
  std::vector< Model > models;
  std::vector< std::vector< uint32_t > > readers( groups.size() ); // per group and neuron: history readers exported
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    readers[ g ].assign( groups[ g ].nodes.size(), 0 );
  }
  for ( size_t syn_id = 0; syn_id < conns.size(); ++syn_id )
  {
    ConnectorBase* c = conns[ syn_id ];
    if ( not c or c->size() == 0 or is_static_connector( c ) or cm[ syn_id ]->get_common_properties().get_weight_recorder() )
    {
      continue;
    }
    nestcl_glue::with_translated_synapses( c,
      [ & ]( auto& items, const nestcl_synapse_model* sm, auto pack, auto unpack, auto pack_cp )
      {
        using C = std::decay_t< decltype( items[ 0 ] ) >;
        if ( not device_deliverable( sm ) )
        {
          return; // stays with NEST, whose connectors deliver it
        }
        Model mdl;
        mdl.rows.syn_id = static_cast< synindex >( syn_id );
        mdl.rows.sm = sm;
        mdl.csr.assign( groups.size(), Csr() );
        mdl.cp.assign( sm->cp_size + 8, 0 );
        pack_cp( static_cast< const typename C::CommonPropertiesType& >( cm[ syn_id ]->get_common_properties() ), sm,
          mdl.cp.data() );
        mdl.rows.lcid.assign( groups.size(), std::vector< size_t >() );
        std::vector< unsigned char > first( sm->syn_size ), one( sm->syn_size ), param0( sm->syn_size );
        bool ok = true;
        const size_t n = items.size();
        for ( size_t lcid = 0; lcid < n and ok; ++lcid )
        {
          const C& x = items[ lcid ];
          const bool starts = lcid == 0 or not items[ lcid - 1 ].source_has_more_targets();
          Node* t = x.get_target( tid );
          const size_t tl = t->get_thread_lid();
          const long d = x.get_delay_steps();
          if ( t->get_thread() != tid or tl >= where.size() or where[ tl ].first == 0 or d < 1 or d > max_delay
            or d > 65535 )
          {
            ok = false;
            break;
          }
          pack( x, sm, one.data() );
          if ( lcid == 0 )
          {
            param0 = one;
            mdl.rport = static_cast< long >( x.get_rport() );
          }
          if ( starts )
          {
            first = one;
            mdl.rows.starts.push_back( lcid );
            for ( Csr& r : mdl.csr )
            {
              r.row_ptr.push_back( r.row_ptr.back() );
            }
          }
          const size_t g = where[ tl ].first - 1;
          ok = static_cast< long >( x.get_rport() ) == mdl.rport
            and same_role( sm, one.data(), first.data(), NESTCL_SYN_SOURCE )
            and same_role( sm, one.data(), param0.data(), NESTCL_SYN_PARAMETER )
            and not reads_offset( groups[ g ], mdl.rport );
          Csr& r = mdl.csr[ g ];
          r.target.push_back( where[ tl ].second );
          r.delay.push_back( static_cast< uint16_t >( d ) );
          r.syn.insert( r.syn.end(), one.begin(), one.end() );
          r.row_ptr.back()++;
          mdl.rows.lcid[ g ].push_back( lcid );
        }
        if ( not ok )
        {
          return;
        }
        for ( size_t g = 0; g < groups.size(); ++g )
        {
          if ( not mdl.csr[ g ].target.empty() and not plastic_routable( groups[ g ], mdl.rport ) )
          {
            return; // stays with NEST, whose connectors call the target's own handle()
          }
        }
        for ( size_t g = 0; g < groups.size(); ++g )
        {
          for ( size_t k = 0; sm->uses_history and k < mdl.csr[ g ].target.size(); ++k )
          {
            readers[ g ][ mdl.csr[ g ].target[ k ] ]++;
          }
        }
        mdl.rows.unpack = [ &items, sm, unpack ]( size_t lcid, const void* syn ) { unpack( items[ lcid ], sm, syn ); };
        models.push_back( std::move( mdl ) );
      } );
  }
  if ( models.empty() )
  {
    return 0;
  }
  // Every history that a device synapse reads must be read only there, and one tau_minus per block.
  std::vector< double > tau( groups.size(), -1.0 ), tau_t( groups.size(), -1.0 );
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    for ( size_t i = 0; i < groups[ g ].nodes.size(); ++i )
    {
      ArchivingNode* a = dynamic_cast< ArchivingNode* >( groups[ g ].nodes[ i ] );
      const size_t n_in = a ? a->*member( an_n_incoming_tag {} ) : 0;
      if ( readers[ g ][ i ] != n_in )
      {
        return 0; // an STDP synapse that stays with NEST reads this neuron's history
      }
      if ( a and n_in )
      {
        const double tm = a->*member( an_tau_minus_tag {} ), tt = a->*member( an_tau_minus_triplet_tag {} );
        if ( ( tau[ g ] >= 0 and tau[ g ] != tm ) or ( tau_t[ g ] >= 0 and tau_t[ g ] != tt ) )
        {
          return 0;
        }
        tau[ g ] = tm;
        tau_t[ g ] = tt;
      }
    }
  }
  long count = 0;
  for ( size_t g = 0; g < groups.size(); ++g )
  {
    Group& gr = groups[ g ];
    if ( tau[ g ] > 0 )
    {
      check( nestcl_block_history( gr.block, tau[ g ], tau_t[ g ], 1u << 20 ),
        "the spike history of " + std::string( gr.glue->name ) );
      std::vector< nestcl_history_entry > e;
      for ( size_t i = 0; i < gr.nodes.size(); ++i )
      {
        ArchivingNode* a = dynamic_cast< ArchivingNode* >( gr.nodes[ i ] );
        nestcl_history_state st { 0.0, 0.0, -1.0, 0.0, 0, 0 };
        e.clear();
        if ( a )
        {
          for ( const histentry& h : a->*member( an_history_tag {} ) )
          {
            e.push_back( { h.t_, h.Kminus_, h.Kminus_triplet_, static_cast< uint32_t >( h.access_counter_ ) } );
          }
          st = { a->*member( an_kminus_tag {} ), a->*member( an_kminus_triplet_tag {} ),
            a->*member( an_last_spike_tag {} ), a->*member( an_max_delay_tag {} ),
            static_cast< uint32_t >( a->*member( an_n_incoming_tag {} ) ), static_cast< uint32_t >( e.size() ) };
        }
        check( nestcl_block_history_set( gr.block, static_cast< uint32_t >( i ), &st, e.data() ),
          "the spike history of " + std::string( gr.glue->name ) );
      }
    }
  }
  for ( Model& mdl : models )
  {
    mdl.rows.set.assign( groups.size(), -1 );
    for ( size_t g = 0; g < groups.size(); ++g )
    {
      Csr& r = mdl.csr[ g ];
      if ( r.target.empty() )
      {
        continue;
      }
      check( nestcl_block_add_plastic( groups[ g ].block, mdl.rows.sm, mdl.cp.data(), mdl.rport,
               static_cast< uint32_t >( mdl.rows.starts.size() ), r.row_ptr.data(), r.target.data(), r.delay.data(),
               r.syn.data(), &mdl.rows.set[ g ] ),
        "placing the " + std::string( mdl.rows.sm->name ) + " synapses of " + std::string( groups[ g ].glue->name )
          + " on the device" );
      count += static_cast< long >( r.target.size() );
    }
    out.push_back( std::move( mdl.rows ) );
  }
  return count;
}

/* The device's synapse state and spike histories back into NEST's connections and nodes. */
static void
import_plastic( std::vector< Group >& groups, std::vector< PlasticRows >& sets )
{
  for ( PlasticRows& pr : sets )
  {
    for ( size_t g = 0; g < groups.size() and g < pr.set.size(); ++g )
    {
      if ( pr.set[ g ] < 0 or not groups[ g ].block )
      {
        continue;
      }
      std::vector< unsigned char > syn( pr.lcid[ g ].size() * pr.sm->syn_size );
      check( nestcl_block_plastic_read( groups[ g ].block, pr.set[ g ], syn.data() ),
        "reading back the " + std::string( pr.sm->name ) + " synapses" );
      for ( size_t k = 0; k < pr.lcid[ g ].size(); ++k )
      {
        pr.unpack( pr.lcid[ g ][ k ], syn.data() + k * pr.sm->syn_size );
      }
    }
  }
  std::vector< nestcl_history_entry > e;
  for ( Group& gr : groups )
  {
    // A block whose creation a refusal stopped (prepare threw) is null: nothing to read back.
    if ( not gr.block or nestcl_block_history_read( gr.block ) != 0 )
    {
      continue; // no history on this block
    }
    for ( size_t i = 0; i < gr.nodes.size(); ++i )
    {
      ArchivingNode* a = dynamic_cast< ArchivingNode* >( gr.nodes[ i ] );
      nestcl_history_state st;
      if ( not a or nestcl_block_history_get( gr.block, static_cast< uint32_t >( i ), &st, nullptr ) != 0 )
      {
        continue;
      }
      e.resize( st.n_entries + 1 );
      nestcl_block_history_get( gr.block, static_cast< uint32_t >( i ), &st, e.data() );
      std::deque< histentry >& h = a->*member( an_history_tag {} );
      h.clear();
      for ( uint32_t k = 0; k < st.n_entries; ++k )
      {
        h.push_back( histentry( e[ k ].t, e[ k ].kminus, e[ k ].kminus_triplet, e[ k ].access ) );
      }
      a->*member( an_kminus_tag {} ) = st.Kminus;
      a->*member( an_kminus_triplet_tag {} ) = st.Kminus_triplet;
      a->*member( an_last_spike_tag {} ) = st.last_spike;
    }
  }
}

/*
 * nestcl_device_poisson: each poisson_generator replica of thread tid that
 * runs unchanged for the whole simulation (origin 0, start 0, stop infinite)
 * and whose connections on the thread all reach device neurons is drawn on the
 * device instead; NEST's loop then skips the replica. Returns how many moved.
 */
static long
export_generators( size_t tid,
  std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where,
  std::vector< char >& skip )
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
      continue; // a stimulation window: NEST's own generator keeps it exact
    }
    ev.hits.clear();
    kernel().connection_manager.send_from_device( tid, node->get_local_device_id(), ev );
    std::vector< std::vector< uint32_t > > target( groups.size() ), salt( groups.size() );
    std::vector< std::vector< double > > value( groups.size() );
    std::vector< std::vector< uint16_t > > delay( groups.size() );
    std::map< size_t, uint32_t > seen; // target lid -> connections so far (multapses draw apart)
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

NestclManager&
nestcl_manager()
{
  static NestclManager m;
  return m;
}

NestclManager::NestclManager()
  : impl_( new Impl() )
{
}

NestclManager::~NestclManager()
{
#ifdef HAVE_NESTCL
  if ( impl_ and impl_->dev )
  {
    nestcl_device_close( impl_->dev );
  }
#endif
}

void
NestclManager::initialize( const bool adjust_number_of_threads_or_rng_only )
{
  const size_t T = kernel().vp_manager.get_num_threads();
  if ( not adjust_number_of_threads_or_rng_only )
  {
    impl_->streams = 0;
    impl_->fraction_auto = true;
    impl_->device_spec.clear();
    impl_->device_poisson = false;
    impl_->min_work = DEFAULT_MIN_WORK;
    impl_->placed.clear();
#ifdef HAVE_NESTCL
    impl_->pending.clear();
    impl_->next_step.clear();
#endif
  }
  // Fewer threads than streams: every thread is a stream VP.
  impl_->streams = std::min( impl_->streams, static_cast< long >( T ) );
  nestcl_placement::before_create = []( size_t n ) { nestcl_manager().choose_split( n ); };
  if ( not adjust_number_of_threads_or_rng_only )
  {
    impl_->measured_wall = impl_->recommended = impl_->recommended_wall = NAN;
#ifdef HAVE_NESTCL_PERFMODEL
    impl_->profile_state = -1;
#endif
  }
  if ( not impl_->fraction_auto and not fraction_problem( impl_->streams, impl_->fraction ).empty() )
  {
    impl_->fraction_auto = true; // the new thread count does not admit the share that was set
  }
  place();
  impl_->t_update.assign( T, 0.0 );
  impl_->n_slices.assign( T, 0 );
  impl_->n_launches.assign( T, 0 );
  impl_->n_waits.assign( T, 0 );
  impl_->enq_rc.assign( T, std::vector< int >() );
  impl_->t_stage.assign( T, 0.0 );
  impl_->t_emit.assign( T, 0.0 );
  impl_->t_deliver.assign( T, 0.0 );
  impl_->n_syn.assign( T, 0 );
  impl_->n_gen.assign( T, 0 );
  on_device_.assign( T, std::vector< char >() );
}

void
NestclManager::finalize( const bool )
{
  cleanup();
}

static double
now_s()
{
  return std::chrono::duration< double >( std::chrono::steady_clock::now().time_since_epoch() ).count();
}

void
NestclManager::set_status( const Dictionary& d )
{
  const long T = static_cast< long >( kernel().vp_manager.get_num_threads() );
  const bool frozen = kernel().node_manager.size() > 0 or kernel().simulation_manager.has_been_simulated();
  long streams = impl_->streams;
  if ( d.update_integer_value( KEY_STREAMS, streams ) and streams != impl_->streams )
  {
    if ( streams < 0 or streams > T )
    {
      throw BadProperty( KEY_STREAMS + " must lie in [0, local_num_threads] = [0, " + std::to_string( T ) + "], not "
        + std::to_string( streams ) );
    }
#ifndef HAVE_NESTCL
    if ( streams > 0 )
    {
      throw BadProperty( KEY_STREAMS + ": this NEST was built without nestcl (configure it with -Dwith-nestcl=<prefix>)" );
    }
#endif
    if ( frozen )
    {
      throw BadProperty( KEY_STREAMS + " cannot change once nodes exist or the network was simulated (call ResetKernel first)" );
    }
  }
  std::string spec = impl_->device_spec;
  if ( d.update_value( KEY_DEVICE, spec ) and spec != impl_->device_spec )
  {
    if ( frozen )
    {
      throw BadProperty( KEY_DEVICE + " cannot change once nodes exist or the network was simulated" );
    }
#ifdef HAVE_NESTCL
    nestcl_device_info info;
    if ( nestcl_select_device( spec.empty() ? nullptr : spec.c_str(), &info ) != 0 )
    {
      throw BadProperty( KEY_DEVICE + ": " + nestcl_last_error() );
    }
#endif
  }
  // A number in [0, 1] or "auto" (for now the even split, nestcl_streams /
  // local_num_threads, which is NEST's round robin). Another share places the
  // neurons in weighted blocks (nestcl_placement.h).
  bool fraction_auto = impl_->fraction_auto;
  double fraction = impl_->fraction;
  std::string fraction_text;
  if ( d.known( KEY_FRACTION ) )
  {
    bool is_text = false;
    try
    {
      fraction_text = d.get< std::string >( KEY_FRACTION );
      is_text = true;
    }
    catch ( const TypeMismatch& )
    {
    }
    if ( is_text )
    {
      if ( fraction_text != "auto" )
      {
        throw BadProperty( KEY_FRACTION + " must be a number in [0, 1] or \"auto\", not \"" + fraction_text + "\"" );
      }
      fraction_auto = true;
    }
    else
    {
      fraction = d.get< double >( KEY_FRACTION );
      if ( not( fraction >= 0.0 and fraction <= 1.0 ) )
      {
        throw BadProperty( KEY_FRACTION + " must be a number in [0, 1] or \"auto\", not " + std::to_string( fraction ) );
      }
      fraction_auto = false;
    }
  }
  if ( not fraction_auto )
  {
    const std::string problem = fraction_problem( streams, fraction );
    if ( not problem.empty() )
    {
      throw BadProperty( KEY_FRACTION + " = " + std::to_string( fraction ) + ": " + problem );
    }
  }
  if ( frozen and ( fraction_auto != impl_->fraction_auto or ( not fraction_auto and fraction != impl_->fraction ) ) )
  {
    throw BadProperty( KEY_FRACTION + " cannot change once nodes exist or the network was simulated (call ResetKernel first)" );
  }
  long min_work = impl_->min_work;
  if ( d.update_integer_value( KEY_MIN_WORK, min_work ) and min_work < 0 )
  {
    throw BadProperty( KEY_MIN_WORK + " must be a whole number of neuron-steps >= 0 (0: always the device), not "
      + std::to_string( min_work ) );
  }
  bool device_poisson = impl_->device_poisson;
  d.update_value( KEY_DEVICE_POISSON, device_poisson ); // takes effect at the next Simulate
  impl_->device_poisson = device_poisson;
  impl_->min_work = min_work; // takes effect at the next Simulate
  impl_->streams = streams;
#ifdef HAVE_NESTCL_PERFMODEL
  if ( spec != impl_->device_spec )
  {
    impl_->profile_state = -1;
  }
#endif
  impl_->device_spec = spec;
  impl_->fraction_auto = fraction_auto;
  impl_->fraction = fraction;
  if ( not frozen )
  {
    place();
  }
}

std::string
NestclManager::fraction_problem( long streams, double fraction ) const
{
  const long T = static_cast< long >( kernel().vp_manager.get_num_threads() );
  const double eps = 1e-12;
  if ( streams == 0 and fraction > eps )
  {
    return "there are no stream VPs (nestcl_streams is 0), so their share can only be 0";
  }
  if ( streams == T and fraction < 1.0 - eps )
  {
    return "every thread is a stream VP (nestcl_streams = local_num_threads), so their share can only be 1";
  }
  const double even = T > 0 ? static_cast< double >( streams ) / static_cast< double >( T ) : 0.0;
  if ( std::abs( fraction - even ) > eps and kernel().mpi_manager.get_num_processes() > 1 )
  {
    return "a share other than the even split (" + std::to_string( even )
      + ") places neurons in weighted blocks, which needs a single MPI process";
  }
  return std::string();
}

void
NestclManager::place()
{
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( impl_->streams );
  const double even = T > 0 ? static_cast< double >( G ) / static_cast< double >( T ) : 0.0;
  impl_->split_decided = false;
  impl_->split_alpha = -1.0;
  impl_->predicted_wall = NAN;
  impl_->split_source = impl_->fraction_auto ? "even split" : "nestcl_gpu_fraction";
  if ( impl_->fraction_auto or std::abs( impl_->fraction - even ) <= 1e-12 or G == 0 or G == T )
  {
    nestcl_placement::clear(); // NEST's round robin (auto: until the first Create of neurons)
    return;
  }
  std::vector< double > w( T );
  for ( size_t v = 0; v < T; ++v )
  {
    w[ v ] = v >= T - G ? impl_->fraction / static_cast< double >( G ) : ( 1.0 - impl_->fraction ) / static_cast< double >( T - G );
  }
  nestcl_placement::start( w );
}

#ifdef HAVE_NESTCL_PERFMODEL
/*
 * The device's hpc_benchmark profile (perfmodel/README.md), found and checked
 * as nestcl run finds it, once per ResetKernel or device change; false with
 * the reason in m.profile_why.
 */
template < typename M >
static bool
profile_of( M& m )
{
  if ( m.profile_state < 0 )
  {
    nestcl_device_info info;
    char buf[ 4096 ] = "";
    if ( nestcl_select_device( m.device_spec.empty() ? nullptr : m.device_spec.c_str(), &info ) != 0 )
    {
      m.profile_state = NESTCL_PM_UNUSABLE;
      m.profile_why = nestcl_last_error();
      return false;
    }
    m.profile_state = nestcl_pm_profile_find( "hpc_benchmark", info.device_name, info.driver_version, &m.profile, buf,
      sizeof buf );
    m.profile_path = buf;
    m.profile_why = m.profile_state == NESTCL_PM_NO_CACHE ? "no cache folder (NESTCL_CACHE_DIR is off)"
      : m.profile_state == NESTCL_PM_MISSING
      ? "no performance profile of '" + std::string( info.device_name ) + "' (" + m.profile_path
        + "; nestcl run hpc_benchmark --gpu-fraction auto calibrates one)"
      : m.profile_state == NESTCL_PM_UNUSABLE ? std::string( nestcl_last_error() )
                                              : std::string();
  }
  return m.profile_state == NESTCL_PM_FOUND;
}
#endif

void
NestclManager::choose_split( size_t n )
{
  Impl& m = *impl_;
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( m.streams );
  if ( not m.fraction_auto or m.split_decided or G == 0 or G == T or nestcl_placement::active )
  {
    return;
  }
  m.split_decided = true;
  if ( kernel().mpi_manager.get_num_processes() > 1 )
  {
    m.split_source = "even split: a share from the performance model places neurons in weighted blocks, which needs "
                     "a single MPI process";
    return;
  }
  if ( kernel().node_manager.size() > 0 )
  {
    m.split_source = "even split: other nodes were created before the first neurons";
    return;
  }
#ifdef HAVE_NESTCL_PERFMODEL
  if ( not profile_of( m ) )
  {
    m.split_source = "even split: " + m.profile_why;
    // No profile is the usual case (INFO); one that is there but unusable deserves a WARNING.
    LOG( m.profile_state == NESTCL_PM_UNUSABLE ? VerbosityLevel::WARNING : VerbosityLevel::INFO, "NestclManager",
      "nestcl_gpu_fraction \"auto\": " + m.split_source );
    return;
  }
  /*
   * The prior: the profile's network (hpc_benchmark: in-degree 11250, delay
   * 1.5 ms, its measured rate, static synapses) with the neurons of this
   * first Create, as `nestcl perfmodel predict --neurons n --synapse static`.
   * After each Simulate, nestcl_recommended_gpu_fraction corrects it with
   * the network and the times measured (measure_split).
   */
  nestcl_pm_config c;
  nestcl_pm_hpc_config( &m.profile, static_cast< double >( n ), 0, 1, &c );
  c.TC = static_cast< double >( T - G );
  c.TG = static_cast< double >( G );
  double wall = NAN;
  const double a = nestcl_pm_best_alpha( m.profile.p, &c, &wall );
  std::vector< double > w( T );
  for ( size_t v = 0; v < T; ++v )
  {
    w[ v ] = v >= T - G ? a / static_cast< double >( G ) : ( 1.0 - a ) / static_cast< double >( T - G );
  }
  nestcl_placement::start( w );
  m.split_alpha = a;
  m.predicted_wall = wall;
  m.split_source = "performance profile " + m.profile_path;
  LOG( VerbosityLevel::INFO, "NestclManager",
    "nestcl_gpu_fraction \"auto\": " + std::to_string( a ) + " from " + m.profile_path );
#else
  (void)n;
  m.split_source = "even split: this nestcl has no performance model (built without GSL)";
#endif
}

void
NestclManager::measure_split()
{
  Impl& m = *impl_;
  const double sim_s = ( kernel().simulation_manager.get_time().get_ms() - m.run_t0_ms ) * 1e-3;
  if ( m.streams == 0 or not( sim_s > 0.0 ) or m.neurons == 0 )
  {
    return;
  }
  // NEST's own stopwatch of the run (time_simulate, reset by each Simulate's prepare) and spike counter.
  Dictionary sim_status, ev_status;
  kernel().simulation_manager.get_status( sim_status );
  kernel().event_delivery_manager.get_status( ev_status );
  double run_s = sim_status.known( "time_simulate" ) ? sim_status.get< double >( "time_simulate" ) : 0.0;
  if ( not( run_s > 0.0 ) )
  {
    run_s = now_s() - m.run_wall0;
  }
  const double wall = run_s / sim_s;
  m.measured_wall = wall;
#ifdef HAVE_NESTCL_PERFMODEL
  const size_t T = kernel().vp_manager.get_num_threads();
  const size_t G = static_cast< size_t >( m.streams );
  if ( kernel().mpi_manager.get_num_processes() > 1 or not profile_of( m ) )
  {
    return;
  }
  // This network as it ran: its neurons, in-degree, rate and plastic share (from the stream VPs' synapses).
  double busy = 0.0;
  long syn = 0, plastic = 0;
  for ( size_t k = 0; k < m.t_update.size(); ++k )
  {
    busy += m.t_update[ k ] + m.t_deliver[ k ];
    syn += m.n_syn[ k ];
    plastic += k < m.n_plastic.size() ? m.n_plastic[ k ] : 0;
  }
  nestcl_pm_config c;
  std::memset( &c, 0, sizeof c );
  c.N = static_cast< double >( m.neurons );
  c.K = static_cast< double >( kernel().connection_manager.get_num_connections() ) / c.N;
  c.F = ev_status.get< double >( "local_spike_counter" ) / c.N / sim_s;
  c.M = 1.0;
  c.TC = static_cast< double >( T - G );
  c.TG = static_cast< double >( G );
  c.phi = syn + plastic > 0 ? static_cast< double >( plastic ) / static_cast< double >( syn + plastic ) : 0.0;
  c.S = 1.0 / ( kernel().connection_manager.get_min_delay() * Time::get_resolution().get_ms() * 1e-3 );
  c.P = static_cast< double >( m.profile.cores );
  nestcl_pm_measured x;
  x.alpha = not m.fraction_auto ? m.fraction
    : m.split_alpha >= 0.0      ? m.split_alpha
                                : ( T ? static_cast< double >( G ) / static_cast< double >( T ) : 0.0 );
  x.wall = wall;
  x.cpu_busy = 0.0; // NEST's per-thread update and delivery stopwatches are detailed timers, off by default
  x.gpu_busy = G ? ( busy - m.busy0 ) / static_cast< double >( G ) / sim_s : 0.0;
  nestcl_pm_balance bal;
  if ( nestcl_pm_balance_fit( m.profile.p, &c, &x, 1, &bal ) == 0 )
  {
    m.recommended = bal.alpha;
    m.recommended_wall = bal.wall;
  }
#endif
}

void
NestclManager::get_status( Dictionary& d )
{
  const size_t T = kernel().vp_manager.get_num_threads();
  d[ KEY_STREAMS ] = impl_->streams;
  d[ KEY_FRACTION ] = not impl_->fraction_auto ? impl_->fraction
    : impl_->split_alpha >= 0.0                  ? impl_->split_alpha
    : ( T ? static_cast< double >( impl_->streams ) / static_cast< double >( T ) : 0.0 );
  d[ KEY_FRACTION_SOURCE ] = impl_->split_source;
  // -1 where not known: NaN would make two reads of the kernel status unequal (NEST's test_status compares them).
  const auto known = []( double x ) { return std::isnan( x ) ? -1.0 : x; };
  d[ KEY_PREDICTED_WALL ] = known( impl_->predicted_wall );
  d[ KEY_MEASURED_WALL ] = known( impl_->measured_wall );
  d[ KEY_RECOMMENDED ] = known( impl_->recommended );
  d[ KEY_RECOMMENDED_WALL ] = known( impl_->recommended_wall );
  d[ KEY_DEVICE ] = impl_->device_spec;
  d[ KEY_DEVICE_POISSON ] = impl_->device_poisson;
  d[ KEY_MIN_WORK ] = impl_->min_work;
  std::vector< std::string > models;
  long bytes = 0;
  std::string name = impl_->device_name;
#ifdef HAVE_NESTCL
  size_t count = 0;
  const nestcl_glue::entry* t = nestcl_glue::table( &count );
  for ( size_t k = 0; k < count; ++k )
  {
    models.push_back( t[ k ].name );
  }
  if ( impl_->dev )
  {
    bytes = static_cast< long >( nestcl_device_bytes_total( impl_->dev ) );
  }
  if ( name.empty() )
  {
    // Looked up once per device spec: selecting a device queries OpenCL (and builds a probe kernel), and
    // scripts read the kernel status often (nest.NumProcesses() does).
    if ( not impl_->probed or impl_->probed_spec != impl_->device_spec )
    {
      nestcl_device_info info;
      impl_->probed_name = nestcl_select_device( impl_->device_spec.empty() ? nullptr : impl_->device_spec.c_str(), &info ) == 0
        ? info.device_name
        : "";
      impl_->probed_spec = impl_->device_spec;
      impl_->probed = true;
    }
    name = impl_->probed_name;
  }
#endif
  d[ KEY_MODELS ] = models;
  d[ KEY_DEVICE_NAME ] = name;
  d[ KEY_DEVICE_BYTES ] = bytes;
  double tu = 0, ts = 0, te = 0, td = 0;
  long ns = 0, ng = 0, np = 0;
  for ( size_t k = 0; k < impl_->t_update.size(); ++k )
  {
    tu += impl_->t_update[ k ];
    ts += impl_->t_stage[ k ];
    te += impl_->t_emit[ k ];
    td += impl_->t_deliver[ k ];
    ns += impl_->n_syn[ k ];
    ng += impl_->n_gen[ k ];
    np += k < impl_->n_plastic.size() ? impl_->n_plastic[ k ] : 0;
  }
  d[ KEY_TIME_UPDATE ] = tu;
  d[ KEY_TIME_STAGE ] = ts;
  d[ KEY_TIME_EMIT ] = te;
  d[ KEY_TIME_DELIVER ] = td;
  d[ KEY_DEVICE_SYNAPSES ] = ns;
  d[ KEY_DEVICE_GENERATORS ] = ng;
  d[ KEY_DEVICE_PLASTIC ] = np;
  // What the stream VPs asked of the device: kernel launches and waits (clFinish, blocking transfers), and
  // the slices they updated; a stream waits once per slice (twice when its spikes pass the read-back guess).
  long launches = 0, waits = 0, slices = 0;
  for ( size_t k = 0; k < impl_->n_slices.size(); ++k )
  {
    slices += impl_->n_slices[ k ];
    launches += impl_->n_launches[ k ];
    waits += impl_->n_waits[ k ];
  }
#ifdef HAVE_NESTCL
  for ( const std::vector< Group >& gs : impl_->groups )
  {
    for ( const Group& g : gs )
    {
      uint64_t l = 0, w = 0;
      nestcl_block_enqueued( g.block, &l, &w );
      launches += static_cast< long >( l );
      waits += static_cast< long >( w );
    }
  }
#endif
  d[ KEY_LAUNCHES ] = launches;
  d[ KEY_WAITS ] = waits;
  d[ KEY_SLICES ] = slices;
  // Per model, where the neurons of the last Simulate's stream VPs ran, and why those on the host did.
  Dictionary nodes;
  for ( const auto& [ model, placed ] : impl_->placed )
  {
    Dictionary entry, why;
    entry[ "device" ] = placed.device;
    entry[ "c_loop" ] = placed.c_loop;
    entry[ "host" ] = placed.host;
    for ( const auto& [ reason, count ] : placed.why )
    {
      why[ reason ] = count;
    }
    entry[ "host_reasons" ] = why;
    nodes[ model ] = entry;
  }
  d[ KEY_NODES ] = nodes;
}

#ifdef HAVE_NESTCL
static const nestcl_glue::entry*
find_glue( const std::string& model )
{
  size_t count = 0;
  const nestcl_glue::entry* t = nestcl_glue::table( &count );
  for ( size_t k = 0; k < count; ++k )
  {
    if ( model == t[ k ].name )
    {
      return &t[ k ];
    }
  }
  return nullptr;
}

/*
 * Why a neuron of a stream VP stays on the host, as the translator or the
 * glue said it, without the node id (nestcl_nodes counts nodes per reason):
 * the glue's receptors_<model>() throws, naming the node, for a node that a
 * condition keeps off the device (nestcl_translate's emit_glue.c).
 */
static std::string
condition_reason( const std::string& what )
{
  static const std::regex node_prefix( "^nestcl: ([A-Za-z0-9_]+) node [0-9]+:? ?" ); // built once, not per node
  std::string r = std::regex_replace( what, node_prefix, "" );
  for ( const char* tail : { ", so this node cannot be on a stream VP", "; it cannot be on a stream VP" } )
  {
    const size_t at = r.find( tail );
    if ( at != std::string::npos )
    {
      r.erase( at );
    }
  }
  return r;
}

/* The translator's reason for a model that did not translate (NEST's own models), else a general one. */
static std::string
untranslated_reason( const std::string& model )
{
  for ( const nestcl_cpu_only::entry& e : nestcl_cpu_only::table )
  {
    if ( model == e.name )
    {
      return std::string( "did not translate: " ) + e.reason;
    }
  }
  return "did not translate (not among nestcl_translated_models)";
}

/*
 * The glue that runs this neuron on the device, with its receptor count K; or
 * null, and why not: its model did not translate, or a condition of the node
 * or the network keeps it off the device (the glue's receptors() throws).
 */
static const nestcl_glue::entry*
device_glue( const Node& node, size_t& K, std::string& why )
{
  const nestcl_glue::entry* glue = find_glue( node.get_name() );
  if ( not glue )
  {
    why = untranslated_reason( node.get_name() );
    return nullptr;
  }
  // The translator renders spike_event_is_due( v ) as v: with forced spikes on, update() spikes otherwise.
  const IgnoreAndSpikeMechanism* ias = dynamic_cast< const IgnoreAndSpikeMechanism* >( &node );
  if ( ias and ias->*member( ias_on_tag {} ) )
  {
    why = "ignore_and_spike is on; the device has the model's dynamic spike condition only";
    return nullptr;
  }
  try
  {
    K = glue->receptors( node );
  }
  catch ( const std::exception& e )
  {
    why = condition_reason( e.what() );
    return nullptr;
  }
  return glue;
}

static void
check( int rc, const std::string& what )
{
  if ( rc != 0 )
  {
    throw KernelException( "nestcl: " + what + ": " + nestcl_last_error() );
  }
}
#endif

/* When the run of a Simulate begins (the end of prepare): the clocks, and the streams' busy seconds so far. */
template < typename M >
static void
mark_run_start( M& m )
{
  m.run_wall0 = now_s();
  m.run_t0_ms = kernel().simulation_manager.get_time().get_ms();
  m.busy0 = 0.0;
  for ( size_t k = 0; k < m.t_update.size(); ++k )
  {
    m.busy0 += m.t_update[ k ] + m.t_deliver[ k ];
  }
  m.neurons = 0;
  for ( size_t tid = 0; m.streams > 0 and tid < kernel().vp_manager.get_num_threads(); ++tid )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
    for ( auto it = local.begin(); it != local.end(); ++it )
    {
      m.neurons += it->get_node()->has_proxies() ? 1 : 0;
    }
  }
}

void
NestclManager::prepare()
{
  const size_t T = kernel().vp_manager.get_num_threads();
  on_device_.assign( T, std::vector< char >() );
  impl_->n_syn.assign( T, 0 );
  impl_->n_gen.assign( T, 0 );
  impl_->n_plastic.assign( T, 0 );
  impl_->placed.clear();
#ifdef HAVE_NESTCL
  impl_->syn_rows.assign( T, std::vector< SynRows >() );
  impl_->plastic.assign( T, std::vector< PlasticRows >() );
#endif
  if ( impl_->streams == 0 )
  {
    mark_run_start( *impl_ );
    return;
  }
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  const size_t first_stream = T - static_cast< size_t >( m.streams );
  if ( not m.dev or m.dev_opened_spec != m.device_spec or m.dev_queues != static_cast< int >( m.streams ) )
  {
    if ( m.dev )
    {
      nestcl_device_close( m.dev );
      m.dev = nullptr;
    }
    check( nestcl_device_open( m.device_spec.empty() ? nullptr : m.device_spec.c_str(), static_cast< int >( m.streams ), &m.dev ),
      "opening the device" );
    m.dev_opened_spec = m.device_spec;
    m.dev_queues = static_cast< int >( m.streams );
    m.device_name = nestcl_device_get_info( m.dev )->device_name;
  }
  m.groups.assign( T, std::vector< Group >() );
  m.plan.assign( T, std::vector< Impl::Step >() );
  m.scratch.assign( T, std::vector< double >() );
  m.sorted.assign( T, std::vector< SortedSpike >() );
  m.record.assign( T, 0 );
  m.syn_rows.assign( T, std::vector< SynRows >() );
  m.plastic.assign( T, std::vector< PlasticRows >() );
  m.prows.assign( T, std::vector< std::vector< uint32_t > >() );
  m.plags.assign( T, std::vector< std::vector< uint32_t > >() );
  m.rows.assign( T, std::vector< uint32_t >() );
  m.lags.assign( T, std::vector< uint32_t >() );
  m.where.assign( T, std::vector< std::pair< uint32_t, uint32_t > >() );
  m.next_step.resize( T, -1 ); // kept from the last Simulate (one that updated nothing leaves it)
  const long min_delay = kernel().connection_manager.get_min_delay();
  const long max_delay = kernel().connection_manager.get_max_delay();
  const double h = Time::get_resolution().get_ms();
  Dictionary rng_status;
  kernel().random_manager.get_status( rng_status );
  const uint32_t seed = static_cast< uint32_t >( rng_status.get< long >( "rng_seed" ) );
  for ( size_t tid = first_stream; tid < T; ++tid )
  {
    const SparseNodeArray& local = kernel().node_manager.get_local_nodes( tid );
    on_device_[ tid ].assign( local.size(), 0 );
    // The open group of each (model, K); a node whose id does not continue its
    // arithmetic sequence of ids starts a new one.
    std::map< std::pair< std::string, size_t >, size_t > index;
    for ( auto it = local.begin(); it != local.end(); ++it )
    {
      Node* node = it->get_node();
      if ( not node->has_proxies() )
      {
        // A device's replica (generator, recorder) stays in NEST's loop.
        const std::string model = node->get_name();
        if ( model == "multimeter" or model == "voltmeter" )
        {
          m.record[ tid ] = 1;
        }
        continue;
      }
      if ( node->is_frozen() )
      {
        continue; // NEST's loop skips it too
      }
      size_t K = 0;
      std::string why;
      const nestcl_glue::entry* glue = device_glue( *node, K, why );
      Impl::Placed& placed = m.placed[ node->get_name() ];
      if ( not glue )
      {
        // A hybrid stream VP: NEST's own update() runs this neuron, from update(), between the groups
        // around it (so NEST's loop skips it); the groups open so far end here.
        ++placed.host;
        ++placed.why[ why ];
        index.clear();
        m.plan[ tid ].push_back( { -1, node } );
        if ( node->get_thread_lid() < on_device_[ tid ].size() )
        {
          on_device_[ tid ][ node->get_thread_lid() ] = 1;
        }
        continue;
      }
      ++placed.device;
      auto key = std::make_pair( std::string( glue->name ), K );
      auto at = index.find( key );
      bool fits = false;
      if ( at != index.end() )
      {
        Group& g = m.groups[ tid ][ at->second ];
        const size_t last = g.nodes.back()->get_node_id();
        const size_t id = node->get_node_id();
        fits = id > last and ( g.nodes.size() == 1 or id - last == g.stride );
        if ( fits and g.nodes.size() == 1 )
        {
          g.stride = id - last;
        }
      }
      if ( not fits )
      {
        if ( at == index.end() )
        {
          at = index.emplace( key, m.groups[ tid ].size() ).first;
        }
        else
        {
          at->second = m.groups[ tid ].size();
        }
        m.plan[ tid ].push_back( { static_cast< long >( m.groups[ tid ].size() ), nullptr } );
        m.groups[ tid ].emplace_back();
        m.groups[ tid ].back().glue = glue;
        m.groups[ tid ].back().K = K;
      }
      m.groups[ tid ][ at->second ].nodes.push_back( node );
      if ( node->get_thread_lid() < on_device_[ tid ].size() )
      {
        on_device_[ tid ][ node->get_thread_lid() ] = 1;
      }
    }
    // Too little work per slice to pay for a launch and a wait: the thread runs the blocks' C loops itself.
    size_t work = 0;
    for ( const Group& g : m.groups[ tid ] )
    {
      work += g.nodes.size() * static_cast< size_t >( min_delay );
    }
    const bool on_host = m.min_work > 0 and work < static_cast< size_t >( m.min_work );
    if ( on_host )
    {
      for ( const Group& g : m.groups[ tid ] )
      {
        Impl::Placed& placed = m.placed[ g.nodes.front()->get_name() ];
        placed.device -= static_cast< long >( g.nodes.size() );
        placed.c_loop += static_cast< long >( g.nodes.size() );
      }
    }
    size_t scratch = 0;
    for ( Group& g : m.groups[ tid ] )
    {
      nestcl_block_config c {};
      c.on_host = on_host ? 1 : 0;
      c.model = g.glue->model;
      c.n = static_cast< uint32_t >( g.nodes.size() );
      c.K = static_cast< uint32_t >( g.K );
      c.resolution_ms = h;
      c.min_delay_steps = static_cast< uint32_t >( min_delay );
      c.ring_slots = static_cast< uint32_t >( min_delay + max_delay );
      c.queue = static_cast< int >( tid - first_stream );
      c.record = m.record[ tid ];
      c.rng_seed = seed;
      c.id_first = g.nodes.front()->get_node_id();
      c.id_stride = g.stride ? g.stride : 1;
      check( nestcl_block_create( m.dev, &c, &g.block ), "creating the block of " + std::string( g.glue->name ) );
      void* const* f = nestcl_block_fields( g.block );
      for ( size_t i = 0; i < g.nodes.size(); ++i )
      {
        g.glue->pack( *g.nodes[ i ], f, g.nodes.size(), i );
      }
      check( nestcl_block_upload( g.block ), "uploading " + std::string( g.glue->name ) );
      scratch = std::max( { scratch, static_cast< size_t >( nestcl_block_channels( g.block ) ),
        static_cast< size_t >( nestcl_block_recordables( g.block ) ) } );
    }
    m.where[ tid ].assign( local.size(), std::make_pair( 0u, 0u ) );
    for ( size_t g = 0; g < m.groups[ tid ].size(); ++g )
    {
      const Group& gr = m.groups[ tid ][ g ];
      for ( size_t i = 0; i < gr.nodes.size(); ++i )
      {
        const size_t tl = gr.nodes[ i ]->get_thread_lid();
        if ( tl < m.where[ tid ].size() )
        {
          m.where[ tid ][ tl ] = std::make_pair( static_cast< uint32_t >( g + 1 ), static_cast< uint32_t >( i ) );
        }
      }
    }
    // With precise spikes (off-grid communication) NEST delivers from another buffer, which the delivery
    // hook does not see: the synapses stay with NEST's connectors, which deliver into the nodes' buffers
    // that update() drains (device copies of plastic synapses would miss every spike).
    // A host block holds no synapses either: NEST's connectors deliver to its nodes.
    if ( not on_host and not kernel().event_delivery_manager.get_off_grid_communication() )
    {
      export_synapses( tid, m.groups[ tid ], m.where[ tid ], m.syn_rows[ tid ], m.n_syn[ tid ] );
      m.n_plastic[ tid ] = export_plastic( tid, m.groups[ tid ], m.where[ tid ], m.plastic[ tid ] );
    }
    m.prows[ tid ].assign( m.plastic[ tid ].size(), std::vector< uint32_t >() );
    m.plags[ tid ].assign( m.plastic[ tid ].size(), std::vector< uint32_t >() );
    m.n_gen[ tid ] = m.device_poisson and not on_host and not m.groups[ tid ].empty()
      ? export_generators( tid, m.groups[ tid ], m.where[ tid ], on_device_[ tid ] )
      : 0;
    for ( Group& g : m.groups[ tid ] )
    {
      bool any = false;
      for ( size_t i = 0; i < g.nodes.size(); ++i )
      {
        auto at = m.pending.find( g.nodes[ i ]->get_node_id() );
        if ( at != m.pending.end() )
        {
          for ( const Impl::Pending& p : at->second )
          {
            nestcl_block_ring_add( g.block, p.step, p.ch, static_cast< uint32_t >( i ), p.value );
          }
          any = true;
        }
      }
      if ( any )
      {
        check( nestcl_block_ring_restore( g.block ), "restoring the input in flight of " + std::string( g.glue->name ) );
      }
    }
    m.scratch[ tid ].assign( scratch + 1, 0.0 );
    size_t most = 0;
    for ( const Group& g : m.groups[ tid ] )
    {
      most = std::max( most, g.nodes.size() );
    }
    m.sorted[ tid ].reserve( most * static_cast< size_t >( min_delay ) ); // a block's spikes of one slice at most
  }
  m.pending.clear();
  mark_run_start( m );
#endif
}

bool
NestclManager::deliver( size_t tid, const std::vector< SpikeData >& recv_buffer )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  if ( tid >= m.syn_rows.size() or ( m.syn_rows[ tid ].empty() and m.plastic[ tid ].empty() ) )
  {
    return false;
  }
  if ( kernel().simulation_manager.get_from_step() > 0 )
  {
    return true; // NEST delivers only at the beginning of a slice
  }
  const double t0 = now_s();
  const long min_delay = kernel().connection_manager.get_min_delay();
  const Time clock = kernel().simulation_manager.get_clock();
  const size_t per_rank = kernel().mpi_manager.get_send_recv_count_spike_data_per_rank();
  const std::vector< ConnectorModel* >& cm = kernel().model_manager.get_connection_models( tid );
  const bool compressed = kernel().connection_manager.use_compressed_spikes();
  const std::vector< SynRows >& srs = m.syn_rows[ tid ];
  std::vector< uint32_t >& rows = m.rows[ tid ];
  std::vector< uint32_t >& lags = m.lags[ tid ];
  rows.clear();
  lags.clear();
  SpikeEvent se;
  for ( size_t rank = 0; rank < kernel().mpi_manager.get_num_processes(); ++rank )
  {
    if ( recv_buffer[ rank * per_rank ].is_invalid_marker() )
    {
      continue;
    }
    size_t received = 0; // as NEST counts them: through the entry that carries the end marker
    for ( size_t k = 0; k < per_rank and received == 0; ++k )
    {
      received = recv_buffer[ rank * per_rank + k ].is_end_marker() ? k + 1 : 0;
    }
    for ( size_t k = 0; k < received; ++k )
    {
      const SpikeData& sd = recv_buffer[ rank * per_rank + k ];
      const synindex syn_id = sd.get_syn_id();
      size_t lcid = sd.get_lcid();
      if ( compressed )
      {
        lcid = kernel().connection_manager.get_compressed_spike_data( syn_id, lcid )[ tid ].get_lcid();
      }
      if ( ( compressed and lcid != invalid_lcid ) or ( not compressed and sd.get_tid() == tid ) )
      {
        const SynRows* sr = nullptr;
        for ( const SynRows& x : srs )
        {
          sr = x.syn_id == syn_id ? &x : sr;
        }
        size_t pi = m.plastic[ tid ].size();
        for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
        {
          pi = m.plastic[ tid ][ q ].syn_id == syn_id ? q : pi;
        }
        if ( pi < m.plastic[ tid ].size() )
        {
          if ( not sd.is_flush_event() )
          {
            const std::vector< size_t >& starts = m.plastic[ tid ][ pi ].starts;
            auto at = std::lower_bound( starts.begin(), starts.end(), lcid );
            if ( at == starts.end() or *at != lcid )
            {
              throw KernelException( "nestcl: a spike for lcid " + std::to_string( lcid )
                + ", which does not start a source's STDP connections on the device" );
            }
            m.prows[ tid ][ pi ].push_back( static_cast< uint32_t >( at - starts.begin() ) );
            m.plags[ tid ][ pi ].push_back( sd.get_lag() );
          }
        }
        else if ( sr )
        {
          if ( not sd.is_flush_event() ) // static synapses ignore flush events, as their connectors do
          {
            auto at = std::lower_bound( sr->starts.begin(), sr->starts.end(), lcid );
            if ( at == sr->starts.end() or *at != lcid )
            {
              throw KernelException( "nestcl: a spike for lcid " + std::to_string( lcid )
                + ", which does not start a source's connections on the device" );
            }
            rows.push_back( sr->base + static_cast< uint32_t >( at - sr->starts.begin() ) );
            lags.push_back( sd.get_lag() );
          }
        }
        else
        {
          // As NEST's deliver_events_: the synapse model stays on the CPU.
          se.set_stamp( clock + Time::step( sd.get_lag() + 1 - min_delay ) );
          se.set_offset( sd.get_offset() );
          se.set_flush_event_flag( sd.is_flush_event() );
          se.set_sender_node_id_info( tid, syn_id, lcid );
          kernel().connection_manager.send( tid, syn_id, lcid, cm, se );
        }
      }
    }
  }
  for ( Group& g : m.groups[ tid ] )
  {
    check( nestcl_block_deliver( g.block, clock.get_steps() - min_delay, rows.data(), lags.data(),
             static_cast< uint32_t >( rows.size() ) ),
      "delivering spikes to " + std::string( g.glue->name ) );
  }
  for ( size_t q = 0; q < m.plastic[ tid ].size(); ++q )
  {
    std::vector< uint32_t >& pr = m.prows[ tid ][ q ];
    std::vector< uint32_t >& pl = m.plags[ tid ][ q ];
    for ( size_t g = 0; g < m.groups[ tid ].size(); ++g )
    {
      const int set = m.plastic[ tid ][ q ].set[ g ];
      if ( set >= 0 )
      {
        check( nestcl_block_deliver_plastic( m.groups[ tid ][ g ].block, set, clock.get_steps() - min_delay, pr.data(),
                 pl.data(), static_cast< uint32_t >( pr.size() ) ),
          "delivering spikes through STDP synapses to " + std::string( m.groups[ tid ][ g ].glue->name ) );
      }
    }
    pr.clear();
    pl.clear();
  }
  m.t_deliver[ tid ] += now_s() - t0;
  return true;
#else
  (void)tid;
  (void)recv_buffer;
  return false;
#endif
}

#ifdef HAVE_NESTCL
/*
 * Update, first part: every group's staged input and update go to thread tid's
 * queue, without a wait (the spike lists come back in the one round trip that
 * finish_groups() waits for).
 */
template < typename M >
static void
enqueue_groups( M& m, size_t tid, long origin_steps, long from, long to )
{
  double* scratch = m.scratch[ tid ].data();
  std::vector< int >& enq_rc = m.enq_rc[ tid ];
  enq_rc.assign( m.groups[ tid ].size(), 0 );
  double t_stage = 0.0, t_update = 0.0;
  for ( size_t gi = 0; gi < m.groups[ tid ].size(); ++gi )
  {
    Group& g = m.groups[ tid ][ gi ];
    const double t0 = now_s();
    const uint32_t nch = nestcl_block_channels( g.block );
    const size_t n = g.nodes.size();
    const bool events = g.glue->model->event_queue != 0;
    for ( size_t i = 0; i < n; ++i )
    {
      for ( long lag = from; lag < to; ++lag )
      {
        g.glue->drain( *g.nodes[ i ], lag, scratch, g.K );
        for ( uint32_t ch = 0; ch < nch; ++ch )
        {
          if ( scratch[ ch ] != 0.0 )
          {
            nestcl_block_stage( g.block, static_cast< uint32_t >( lag ), ch, static_cast< uint32_t >( i ), scratch[ ch ] );
          }
        }
        // precise spikes (a SliceRingBuffer): the node's own queue, in the order NEST's update() would take them
        if ( events )
        {
          check( g.glue->events( *g.nodes[ i ], origin_steps, lag, g.block, static_cast< uint32_t >( i ) ),
            "staging the precise spikes of " + std::string( g.glue->name ) );
        }
      }
    }
    const double t1 = now_s();
    enq_rc[ gi ] =
      nestcl_block_update_enqueue( g.block, origin_steps, static_cast< int >( from ), static_cast< int >( to ) );
    t_stage += t1 - t0;
    t_update += now_s() - t1;
  }
  m.t_stage[ tid ] += t_stage;
  m.t_update[ tid ] += t_update;
}

/*
 * Update, last part, for one group (after the wait): its failure, if the
 * model's update() threw on the device; its spikes, sent in NEST's order;
 * its recorded samples into the nodes' loggers.
 */
template < typename M >
static void
send_group( M& m, size_t tid, size_t gi, long origin_steps, long from, long to )
{
  double* scratch = m.scratch[ tid ].data();
  std::vector< int >& enq_rc = m.enq_rc[ tid ];
  Group& g = m.groups[ tid ][ gi ];
  const size_t n = g.nodes.size();
  const double t1 = now_s();
  const int update_rc = enq_rc[ gi ] ? enq_rc[ gi ] : nestcl_block_update_collect( g.block );
  uint32_t f_code = 0, f_index = 0, f_lag = 0;
  int f_status = 0;
  if ( nestcl_block_failure( g.block, &f_code, &f_index, &f_lag, &f_status ) )
  {
    // The model's update() threw on the device (GSLSolverFailure, NumericalInstability, ...), where NEST's own
    // loop would have stopped with that exception: stop the same way, with NEST's exception where it is one of
    // NEST's (a script catches it by its class), naming the node and the step.
    const nestcl_model* model = g.glue->model;
    const bool named = model->failures and f_code >= 1 and f_code <= static_cast< uint32_t >( model->n_failures );
    const std::string name = named ? model->failures[ f_code - 1 ] : "failure";
    std::ostringstream at;
    at << "nestcl: " << g.glue->name << " node ";
    if ( f_index < n )
    {
      at << g.nodes[ f_index ]->get_node_id();
    }
    else
    {
      at << "(local index " << f_index << ")";
    }
    at << " at t = " << Time( Time::step( origin_steps + static_cast< long >( f_lag ) ) ).get_ms() << " ms";
    if ( name == "NumericalInstability" )
    {
      throw NumericalInstability( at.str() );
    }
    if ( name == "GSLSolverFailure" )
    {
      throw GSLSolverFailure( at.str(), f_status );
    }
    throw KernelException( at.str() + ": " + name + " (status " + std::to_string( f_status ) + ")" );
  }
  check( update_rc, "updating " + std::string( g.glue->name ) );
  const double t2 = now_s();
  const nestcl_spike* spikes;
  uint32_t n_spikes;
  nestcl_block_spikes( g.block, &spikes, &n_spikes );
  // In the order NEST's own loop would send them (node by node, each through its lags), since the
  // device writes its list in whatever order the work-items finish.
  // A model that sets spike offsets (nestcl/model.h, spike_offsets) lists each entry's offset at the
  // entry's position; one neuron's entries keep the device's order (its work-item's sends, in order).
  const double* offsets = nestcl_block_spike_offsets( g.block );
  std::vector< SortedSpike >& sorted = m.sorted[ tid ];
  sorted.resize( n_spikes );
  for ( uint32_t k = 0; k < n_spikes; ++k )
  {
    sorted[ k ] = SortedSpike { spikes[ k ].index, spikes[ k ].lag, k };
  }
  std::sort( sorted.begin(), sorted.end(), []( const SortedSpike& a, const SortedSpike& b )
    { return std::tie( a.index, a.lag, a.at ) < std::tie( b.index, b.lag, b.at ); } );
  // A model that sets the multiplicity of its spikes (nestcl/model.h) lists a spike of multiplicity m
  // as m equal entries: NEST sends it as one event, as the model's update() would.
  const bool runs = g.glue->model->multiplicity != 0;
  for ( size_t k = 0; k < sorted.size(); )
  {
    size_t e = k + 1;
    const double offset = offsets ? offsets[ sorted[ k ].at ] : 0.0;
    while ( runs and e < sorted.size() and sorted[ e ].index == sorted[ k ].index
      and sorted[ e ].lag == sorted[ k ].lag and ( not offsets or offsets[ sorted[ e ].at ] == offset ) )
    {
      ++e;
    }
    g.glue->emit(
      *g.nodes[ sorted[ k ].index ], origin_steps, static_cast< long >( sorted[ k ].lag ), e - k, offset );
    k = e;
  }
  if ( m.record[ tid ] )
  {
    const double* rec = nestcl_block_recorded( g.block );
    const uint32_t nrec = nestcl_block_recordables( g.block );
    for ( long lag = from; lag < to; ++lag )
    {
      for ( size_t i = 0; i < n; ++i )
      {
        for ( uint32_t r = 0; r < nrec; ++r )
        {
          scratch[ r ] = rec[ ( static_cast< size_t >( lag - from ) * nrec + r ) * n + i ];
        }
        g.glue->record( *g.nodes[ i ], scratch, origin_steps + lag );
      }
    }
  }
  const double t3 = now_s();
  m.next_step[ tid ] = origin_steps + to;
  m.t_update[ tid ] += t2 - t1;
  m.t_emit[ tid ] += t3 - t2;
}
#endif

void
NestclManager::update( size_t tid, const Time& origin, long from, long to )
{
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  if ( tid >= m.plan.size() or m.plan[ tid ].empty() )
  {
    return;
  }
  const long origin_steps = origin.get_steps();
  // One wait per slice however many models the thread runs (nestcl_waits / nestcl_slices): every group
  // goes to the queue first; the thread waits at the first group whose spikes it must send. The neurons
  // that stay on the host run their own update() in their place among the groups, those before the first
  // group while the device works, so that every spike leaves in the order of NEST's own loop.
  enqueue_groups( m, tid, origin_steps, from, to );
  bool waited = false;
  for ( const Impl::Step& step : m.plan[ tid ] )
  {
    if ( step.group < 0 )
    {
      step.node->update( origin, from, to );
      continue;
    }
    if ( not waited )
    {
      const double t1 = now_s();
      check( nestcl_block_finish( m.groups[ tid ].front().block ), "waiting for the device" );
      m.t_update[ tid ] += now_s() - t1;
      ++m.n_slices[ tid ];
      waited = true;
    }
    send_group( m, tid, static_cast< size_t >( step.group ), origin_steps, from, to );
  }
#else
  (void)tid;
  (void)origin;
  (void)from;
  (void)to;
#endif
}

void
NestclManager::cleanup()
{
  measure_split();
#ifdef HAVE_NESTCL
  Impl& m = *impl_;
  // STDP state first: the blocks go below.
  for ( size_t tid = 0; tid < m.groups.size() and tid < m.plastic.size(); ++tid )
  {
    import_plastic( m.groups[ tid ], m.plastic[ tid ] );
  }
  m.plastic.clear();
  for ( auto& groups : m.groups )
  {
    for ( Group& g : groups )
    {
      if ( g.block and nestcl_block_download( g.block ) == 0 )
      {
        void* const* f = nestcl_block_fields( g.block );
        for ( size_t i = 0; i < g.nodes.size(); ++i )
        {
          g.glue->unpack( *g.nodes[ i ], f, g.nodes.size(), i );
        }
      }
      const size_t tid = &groups - &m.groups[ 0 ];
      const int64_t next = tid < m.next_step.size() ? m.next_step[ tid ] : -1;
      if ( g.block and next >= 0 and nestcl_block_ring_save( g.block ) == 0 )
      {
        const uint32_t slots = nestcl_block_ring_slots( g.block ), nch = nestcl_block_channels( g.block );
        for ( size_t i = 0; i < g.nodes.size(); ++i )
        {
          for ( int64_t step = next; step < next + slots; ++step )
          {
            for ( uint32_t ch = 0; ch < nch; ++ch )
            {
              const int64_t v = nestcl_block_ring_value( g.block, step, ch, static_cast< uint32_t >( i ) );
              if ( v != 0 )
              {
                m.pending[ g.nodes[ i ]->get_node_id() ].push_back( { ch, step, v } );
              }
            }
          }
        }
      }
      if ( g.block and tid < m.n_launches.size() )
      {
        // The kernel keys count over the whole session (until ResetKernel), past Simulate calls included.
        uint64_t l = 0, w = 0;
        nestcl_block_enqueued( g.block, &l, &w );
        m.n_launches[ tid ] += static_cast< long >( l );
        m.n_waits[ tid ] += static_cast< long >( w );
      }
      nestcl_block_destroy( g.block );
      g.block = nullptr;
    }
  }
  m.groups.clear();
  m.plan.clear();
  m.syn_rows.clear();
  m.where.clear();
#endif
  for ( auto& v : on_device_ )
  {
    v.clear();
  }
}
}
