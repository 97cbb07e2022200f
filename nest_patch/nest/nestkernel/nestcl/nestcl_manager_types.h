/*
 * What the NestclManager's roles share (nest_patch): the constants, the
 * timing of Prepare's parts, the shapes of a stream thread's device groups,
 * synapse rows and loop ids, what stays resident, and the export functions
 * that one role calls in another. nestcl_manager_impl.h lists the roles.
 */
#ifndef NESTCL_MANAGER_TYPES_H
#define NESTCL_MANAGER_TYPES_H

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
}

#endif
