/*
 * The NestclManager's state and the steps its files share (nest_patch). Only
 * the manager's own .cpp files include this header; NEST's files include
 * nestcl_manager.h alone, which stays unchanged when these parts change.
 *
 * The manager's files, one role each:
 *   nestcl_manager.cpp          the lifecycle NEST drives: initialize, prepare (its steps by name), cleanup
 *   nestcl_kernel_keys.cpp      the kernel status keys nestcl_* (set_status, get_status)
 *   nestcl_gpu_fraction.cpp     the stream VPs' share of the neurons (nestcl_gpu_fraction, "auto" from the
 *                               performance profile) and what each Simulate measured for it
 *   nestcl_blocks.cpp           a stream thread's neurons in device blocks: packed, updated each slice, written
 *                               back; the one file that includes the generated glue table
 *   nestcl_synapse_export.cpp   static synapses and poisson_generators from NEST's connectors onto the device
 *   nestcl_plastic_export.cpp   translated (STDP) synapses and their targets' spike histories, there and back
 *   nestcl_delivery.cpp         the spikes a stream VP receives, handed to the device's synapse rows
 *   nestcl_device_loop.cpp      a whole Run on the device when one stream VP holds the network (the device
 *                               loop): whether it may, and the run of its slices
 *   nestcl_resident.cpp         the network resident between Simulate calls: what changed since it was built,
 *                               what a read brings back, what a write sends at the next Prepare or Run
 *   nestcl_placement.cpp        weighted placement of node ids on VPs (its own header, for NEST's files)
 *
 * Functions of one file that need the state take it as a template parameter
 * (template < typename M >): Impl is private to NestclManager, so only its
 * members may name it; steps that one file calls in another are Impl's own
 * member functions, declared below.
 */
#ifndef NESTCL_MANAGER_IMPL_H
#define NESTCL_MANAGER_IMPL_H

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nestcl/nestcl_manager.h"

#ifdef HAVE_NESTCL
#include "nestcl/block.h"
#include "nestcl/block_set.h"
#include "nestcl/device.h"
#include "nestcl/model.h"
#ifdef HAVE_NESTCL_PERFMODEL
#include "nestcl/pm_model.h"
#endif

/* The generated glue of one translated model (nestcl_glue_table.hpp, which only nestcl_blocks.cpp includes). */
namespace nestcl_glue
{
struct entry;
}
#endif

namespace nest
{
// Neuron-steps per slice below which a stream VP runs its translated neurons' C loops on its own thread: on
// the H200 a slice's launch and wait cost ~150 us and PoCL's ~120 us, while a neuron-step of the C loop
// takes 0.03-2 us (iaf_psc_alpha to aeif/hh with RKF45): below 64 the thread is never much slower, and for
// a few neurons with a one-step min delay (NEST's precise-spike accuracy tests) ~50 times faster.
const long DEFAULT_MIN_WORK = 64;
// Slices of the device loop between two waits for the device (nestcl_sync_interval), as the engine's sync_interval:
// a wait costs tens of microseconds on a GPU, and the spikes kept in between cost device memory.
const long DEFAULT_SYNC_INTERVAL = 250;

inline double
now_s()
{
  return std::chrono::duration< double >( std::chrono::steady_clock::now().time_since_epoch() ).count();
}

/*
 * Seconds of each part of the Prepares since ResetKernel (the kernel key
 * nestcl_time_prepare_parts), by name; Part adds the seconds of its scope.
 */
std::map< std::string, double >& prepare_parts();
struct Part
{
  const char* name;
  double t0 = now_s();
  explicit Part( const char* n )
    : name( n )
  {
  }
  ~Part()
  {
    prepare_parts()[ name ] += now_s() - t0;
  }
};

#ifdef HAVE_NESTCL
class ConnectorBase;
class SparseNodeArray;

/* One entry of a block's spike list: the neuron, the lag and the entry's position in the list. */
struct SortedSpike
{
  uint32_t index, lag, at;
};

/* The neurons of one model (and receptor count) of one stream thread. */
struct Group
{
  const nestcl_glue::entry* glue = nullptr;  // its functions are called in nestcl_blocks.cpp only
  const char* name = nullptr;                // glue's model name and device model, for the other files
  const nestcl_model* model = nullptr;
  size_t K = 0;
  std::vector< Node* > nodes;  // node ids first, first + stride, ... (a block's random streams follow them)
  size_t stride = 0;
  nestcl_block* block = nullptr;
  bool history = false;  // the block holds its neurons' spike histories (nestcl_plastic_export.cpp)
};

/*
 * The device rows of one synapse model on one thread: row row_of[k] for the
 * run of lcids starting at starts[k] (base + k, or, where the device loop may
 * run, the loop id of the run's source: Impl::loop_ids). A loop id's row holds
 * every static model's run of its source, and a spike reaches each of those
 * runs: only the run that leads the row (lead[k], the first of them) sends
 * the row, so that the slice path delivers it once, as the device loop does.
 */
struct SynRows
{
  synindex syn_id = 0;
  std::vector< size_t > starts;
  uint32_t base = 0;
  std::vector< uint32_t > row_of;
  std::vector< char > lead;
};

/*
 * Where the device loop may run on a thread, each source's loop id (its
 * group's first loop id + its index there) by the (syn_id, first lcid) of
 * each run of its connections on the thread: the device's rows are then loop
 * ids (nestcl/block_set.h) and several synapse models of one source share a
 * row. A source has one run per synapse model on a thread only where NEST
 * sorted the connections by source (use_compressed_spikes); otherwise the
 * ids stay empty and the device loop does not run. Empty: rows are runs.
 */
struct LoopIds
{
  std::map< std::pair< size_t, size_t >, uint32_t > of;
  uint32_t n = 0;  // neurons of the thread's groups
};

struct Runs;  // nestcl_rows.h

/*
 * The translated (STDP) synapses of one synapse model on one thread: rows as
 * SynRows (row_of[k] the row of the run of lcids from starts[k]), in every
 * group the block's set (-1: no synapses there) and the host copy of its
 * rows' pointers. The synapses' state is not kept on the host: NEST's
 * connector c is walked again (runs, in row order) to read it back or send it.
 */
struct PlasticRows
{
  synindex syn_id = 0;
  std::vector< size_t > starts;
  std::vector< uint32_t > row_of;                  // the device row of run k (k, or its source's loop id)
  std::vector< int > set;                          // per group: the block's set, -1 without synapses there
  std::vector< std::vector< uint64_t > > row_ptr;  // per group: n_rows + 1
  uint32_t n_rows = 0;
  std::shared_ptr< Runs > runs;  // starts and rows again, in row order
  const nestcl_synapse_model* sm = nullptr;
  ConnectorBase* c = nullptr;
};

/*
 * What a stream thread holds on the device between Simulate calls, and what
 * changed since (nestcl_resident.cpp). The device is ahead of NEST after a
 * run (its neurons' state, plastic synapses and histories moved on); NEST is
 * ahead after a SetStatus (dirty). A read brings the device's copy back once;
 * the next Prepare or Run sends what is dirty, or builds the thread again
 * where the change cannot be made in place.
 */
struct Resident
{
  bool built = false;
  size_t local = 0;                   // its local nodes when built (new nodes come after them)
  std::vector< size_t > conn_size;    // per syn_id: the connector's size when exported
  std::vector< char > group_ahead;    // per group: the device's state is newer than the nodes'
  std::vector< char > group_dirty;    // per group: the nodes' state is newer (SetStatus): to be sent
  std::vector< char > plastic_ahead;  // per plastic model (Impl::plastic): the device's synapses are newer
  std::vector< char > plastic_dirty;  // per plastic model: NEST's connections are newer: to be sent
  std::string rebuild;                // why the thread must be built again (empty: it need not)
};

/*
 * Private members that NEST keeps private (ConnectionManager::connections_,
 * ArchivingNode's history, ...): an explicit instantiation may name them
 * (C++17 [temp.spec]), and member( tag ) hands out the pointer. Each tag and
 * its instantiation live in the one file that reads the member.
 */
template< typename Tag, auto Member >
struct steal
{
  friend auto
  member( Tag )
  {
    return Member;
  }
};

/* Throws NEST's KernelException for a failed nestcl call (rc != 0), with nestcl's last error. */
void check( int rc, const std::string& what );

/* nestcl_blocks.cpp: the names of the models that nestcl-translate translated (nestcl_translated_models). */
std::vector< std::string > translated_models();

/* nestcl_synapse_export.cpp: thread tid's connectors, by synapse id (NEST's ConnectionManager::connections_). */
std::vector< ConnectorBase* >& thread_connectors( size_t tid );
/* nestcl_synapse_export.cpp: NEST's static synapse types (under any name CopyModel gave them). */
bool is_static_connector( const ConnectorBase* c );
/*
 * nestcl_synapse_export.cpp: thread tid's static synapses onto its device
 * neurons as device CSR rows (by run, or by loop id where ids is not empty).
 */
void export_synapses( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, const LoopIds& ids, std::vector< SynRows >& out,
  long& n_syn );
/* nestcl_synapse_export.cpp: nestcl_device_poisson, the poisson_generators drawn on the device; how many. */
long export_generators( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, std::vector< char >& skip );
/* nestcl_plastic_export.cpp: thread tid's STDP synapses and their targets' histories onto the device; how many. */
long export_plastic( size_t tid, std::vector< Group >& groups,
  const std::vector< std::pair< uint32_t, uint32_t > >& where, const LoopIds& ids, std::vector< PlasticRows >& out );
/* nestcl_plastic_export.cpp: the device's state of one translated synapse model back into NEST's connections. */
void import_plastic( std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  size_t tid, PlasticRows& rows );
/*
 * nestcl_plastic_export.cpp: NEST's connections of one translated synapse model into the device's, in place;
 * false where they no longer qualify (a per-source field or a parameter differs now).
 */
bool export_plastic_state( std::vector< Group >& groups, const std::vector< std::pair< uint32_t, uint32_t > >& where,
  size_t tid, PlasticRows& rows );
/* nestcl_plastic_export.cpp: a group's spike histories back into its nodes (false: it has none on the device). */
bool import_history( Group& g );

/* What prepare() computes once for every stream thread's blocks. */
struct BlockSetup
{
  size_t first_stream;
  long min_delay, max_delay;
  double resolution_ms;
  uint32_t rng_seed;
};
#endif

struct NestclManager::Impl
{
  long streams = 0;
  std::string device_spec;
  std::string device_name;
  bool probed = false;
  std::string probed_spec, probed_name;  // the device that device_spec selects, before any is opened
  bool fraction_auto = true;
  double fraction = 0.0;  // as set, when not auto
  // nestcl_gpu_fraction "auto": how the share in force was chosen (choose_split),
  // and after each Simulate what it measured and the share the model recommends.
  bool split_decided = false;
  std::string split_source = "even split";
  double split_alpha = -1.0;    // the share auto placed (< 0: round robin)
  double predicted_wall = NAN;  // s per simulated s, the profile's, at that share
  double measured_wall = NAN;   // s per simulated s, the last Simulate's run
  double recommended = NAN, recommended_wall = NAN;
  double run_wall0 = 0.0, run_t0_ms = 0.0;  // when the last Simulate's run began
  double busy0 = 0.0;                       // the streams' busy seconds then
  long neurons = 0;                         // neurons of the network (counted by prepare)
#ifdef HAVE_NESTCL_PERFMODEL
  // The device's profile, looked up once per ResetKernel or device change (-1: not yet; else NESTCL_PM_*).
  int profile_state = -1;
  nestcl_pm_profile profile;
  std::string profile_path, profile_why;
#endif
  bool device_poisson = false;
  long min_work = DEFAULT_MIN_WORK;                            // nestcl_device_min_work
  bool device_loop = true;                                     // nestcl_device_loop
  long sync_interval = DEFAULT_SYNC_INTERVAL;                  // nestcl_sync_interval
  std::string sim_path, sim_path_why;                          // the last Run's path, and why not the device loop
  double t_prepare = 0.0;                                      // seconds of the Prepares: packing and export
  std::vector< double > t_update, t_stage, t_emit, t_deliver;  // per thread, seconds
  std::vector< long > n_syn, n_gen;                            // per thread: device synapses, device generators
  std::vector< long > n_plastic;                               // per thread: device STDP synapses
  std::vector< long > n_slices;                                // per thread: slices its stream updated
  std::vector< long > n_launches, n_waits;                     // per thread: those of its blocks destroyed so far
  std::vector< std::vector< int > > enq_rc;                    // per thread: each group's enqueue status this slice
  // Per model, the neurons of the last Simulate's stream VPs: how many ran on the device, how many on the
  // host (NEST's own update() there), and why those did (nestcl_nodes).
  struct Placed
  {
    long device = 0, host = 0, c_loop = 0;  // c_loop: translated, run by its C loop on the stream VP's thread
    std::map< std::string, long > why;
  };
  std::vector< std::map< std::string, Placed > > placed;  // per thread
#ifdef HAVE_NESTCL
  nestcl_device* dev = nullptr;
  std::string dev_opened_spec;
  int dev_queues = 0;
  std::vector< std::vector< Group > > groups;  // per thread
  // Per thread, in the order of its local neurons: a device group (at its first node) or a neuron that
  // stays on the host. update() runs them in this order, so every spike is sent in NEST's own order.
  struct Step
  {
    long group;  // index into groups, or -1 for `node`
    Node* node;
  };
  std::vector< std::vector< Step > > plan;
  std::vector< std::vector< double > > scratch;       // per thread: drained channels, then a recorded sample
  std::vector< std::vector< SortedSpike > > sorted;   // per thread: a block's spikes in NEST's order
  std::vector< char > record;                         // per thread: a multimeter listens on it
  std::vector< std::vector< SynRows > > syn_rows;     // per thread: synapse models delivered on the device
  std::vector< std::vector< PlasticRows > > plastic;  // per thread: translated (STDP) synapses on the device
  std::vector< std::vector< uint32_t > > rows, lags;  // per thread: received spikes for the device
  std::vector< std::vector< std::vector< uint32_t > > > prows, plags;   // per thread, per plastic model
  std::vector< std::vector< std::pair< uint32_t, uint32_t > > > where;  // per thread, by thread lid: (group + 1, index)
  // The device rings' input still in flight when a Simulate ends (a partial
  // slice, delays above min_delay), per node id, for the next Simulate's blocks.
  struct Pending
  {
    uint32_t ch;
    int64_t step;
    int64_t value;
  };
  std::map< size_t, std::vector< Pending > > pending;
  std::vector< int64_t > next_step;       // per thread: the step its blocks update next
  std::vector< nestcl_block_set* > sets;  // per thread: its blocks as one set (nullptr: none)
  std::vector< char > c_loop;             // per thread: its blocks run their C loops on the thread
  std::vector< LoopIds > loop_ids;        // per thread: rows by loop id where the device loop may run
  // The stream threads whose Runs go to the device loop (empty: none), and why none (nestcl_simulate_path_reason).
  // With several, their blocks are one set (set_threads, set_blocks: block k is thread first's group second),
  // owned by the first; set_of( tid ) finds any thread's set.
  std::vector< size_t > loop_threads;
  std::vector< size_t > set_threads;                      // the threads of the shared set (owner first), or none
  std::vector< std::pair< size_t, size_t > > set_blocks;  // its blocks as (thread, group)
  std::string share_refused;  // why the device loop's threads got sets of their own again (their export)
  std::string loop_why;
  // A Run in the device loop is under way: its slices that begin or end inside min_delay go slice by slice, but
  // nothing reaches NEST's ring buffers of the device neurons (the loop's condition), so none are drained.
  bool in_device_loop = false;
  std::vector< Resident > res;         // per thread: what is on the device between calls, what changed
  std::string built_for;               // the settings the resident threads were built for (settings_of)
  std::vector< std::string > rebuilt;  // the last Prepare: each resident thread built again, and why
  // What went to the device and came back since ResetKernel (nestcl_resident): threads built, blocks of
  // neurons and synapse models (a thread's connections of one plastic model) sent in place or read back.
  struct Traffic
  {
    long built = 0, blocks_sent = 0, blocks_read = 0, synapses_sent = 0, synapses_read = 0;
  } traffic;
  bool network_changed = false;  // new nodes or connections since the last Prepare (NEST re-sorts)
#endif

  /* nestcl_gpu_fraction.cpp: when the run of a Simulate begins (the end of prepare), for measure_split. */
  void mark_run_start();
#ifdef HAVE_NESTCL
  /* nestcl_manager.cpp: the per-thread state, sized for T threads (another T: everything released first). */
  void size_threads( size_t T );
  /* nestcl_manager.cpp: the device loop's threads (loop_threads) or why none (loop_why); fresh: threads built now,
     whose blocks it makes, on one queue where the loop runs several threads. */
  void choose_loop(
    const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device );
  /* nestcl_manager.cpp: the resident threads' changes sent, or the threads built again; fresh: the threads grouped. */
  void keep_or_rebuild(
    const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device );
  /* nestcl_manager.cpp: the fresh threads' synapses, their sets, and whether the device loop may run. */
  void finish_threads(
    const BlockSetup& setup, std::vector< char >& fresh, std::vector< std::vector< char > >& on_device );

  /* nestcl_blocks.cpp: opens the device, or reopens it for another spec or stream count. */
  void open_device();
  /* nestcl_blocks.cpp: stream thread tid's neurons grouped by model (the plan) ... */
  void prepare_neurons( size_t tid, const BlockSetup& setup, std::vector< char >& on_device );
  /* ... into device blocks on queue ... */
  void make_blocks( size_t tid, const BlockSetup& setup, int queue );
  /* ... then its synapses and generators ... */
  void prepare_synapses( size_t tid, std::vector< char >& on_device );
  /* ... and the blocks of threads (one, or the device loop's) as one set, owned by the first. */
  void make_set( const std::vector< size_t >& threads );
  /* nestcl_blocks.cpp: the set that holds thread tid's blocks (its own, or the device loop's shared one), or null. */
  nestcl_block_set* set_of( size_t tid ) const;
  /* nestcl_blocks.cpp: block b of thread tid's set as (thread, group): where the set is shared, set_blocks[ b ]. */
  std::pair< size_t, size_t > group_of_block( size_t tid, uint32_t block ) const;
  /* nestcl_blocks.cpp: the spikes of one slice at origin that the device loop kept, sent as update() sends them. */
  void replay( size_t tid, const nestcl_loop_spike* sp, size_t n, long origin );
  /* nestcl_blocks.cpp: a group's update failed in the device loop's slice at origin: NEST's exception. */
  [[noreturn]] void loop_failure( size_t tid, size_t group, long origin );
  /* nestcl_device_loop.cpp: why NEST's loop must run the slices, before the export (else threads: the stream
     threads that hold every neuron). */
  std::string loop_problem_before( size_t first_stream, std::vector< size_t >& threads );
  /* nestcl_device_loop.cpp: the loop ids of the threads' neurons (in thread order, one numbering), and each
     thread's rows by them (LoopIds); why not (empty: they are there). */
  std::string loop_ids_of( const std::vector< size_t >& threads );
  /* nestcl_device_loop.cpp: why NEST's loop must still run them, after the export (empty: it need not). */
  std::string loop_problem_after(
    const std::vector< size_t >& threads, const std::vector< std::vector< char > >& on_device );
  /* nestcl_blocks.cpp: thread tid's blocks freed; with pull, their state and input in flight kept first. */
  void release_thread( size_t tid, bool pull );
  /* nestcl_blocks.cpp: every thread's blocks released (release_thread), the device loop's choice undone. */
  void release_all( bool pull );
  /* nestcl_blocks.cpp: group g of thread tid back into its nodes when the device is ahead (state, histories). */
  void pull_group( size_t tid, size_t g );
  /* nestcl_blocks.cpp: group g of thread tid packed from its nodes and sent to the device; false: it cannot be
     in place (a node's model, receptors or condition changed), and why. */
  bool push_group( size_t tid, size_t g, std::string& why );
  /* nestcl_resident.cpp: the settings that blocks depend on, as one text (a change builds every thread again). */
  std::string settings_of( const BlockSetup& setup ) const;
  /* nestcl_resident.cpp: why resident thread tid must be built again (empty: it need not). */
  std::string rebuild_reason( size_t tid );
  /* nestcl_resident.cpp: thread tid built: what it was built from, for rebuild_reason. */
  void mark_built( size_t tid );
  /* nestcl_resident.cpp: what SetStatus changed on thread tid, to the device in place; why it cannot (empty: done). */
  std::string push_thread( size_t tid );
  /* nestcl_resident.cpp: push_thread for every thread at the start of a Run; NEST's exception where it cannot. */
  void push_changes();
  /* nestcl_resident.cpp: after a run, the device is ahead of NEST everywhere. */
  void mark_ahead();

private:
  void group_neurons( size_t tid, const SparseNodeArray& local, std::vector< char >& on_device );
  bool runs_on_host( size_t tid, long min_delay );
  size_t create_blocks( size_t tid, const BlockSetup& setup, bool on_host, int queue );
  void index_groups( size_t tid, size_t n_local );
  void restore_pending( size_t tid );
  void save_pending( size_t tid, const Group& g );
#endif
};
}

#endif
