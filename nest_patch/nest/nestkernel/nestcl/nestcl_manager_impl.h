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
 * Each role's state is a struct in the header of its name (nestcl_blocks.h:
 * BlockState, ...; the types they share: nestcl_manager_types.h), and Impl
 * is made of them. Functions of one file that need the state take it as a
 * template parameter (template < typename M >): Impl is private to
 * NestclManager, so only its members may name it; steps that one file calls
 * in another are Impl's own member functions, declared below.
 */
#ifndef NESTCL_MANAGER_IMPL_H
#define NESTCL_MANAGER_IMPL_H

#include "nestcl/nestcl_blocks.h"
#include "nestcl/nestcl_delivery.h"
#include "nestcl/nestcl_device_loop.h"
#include "nestcl/nestcl_gpu_fraction.h"
#include "nestcl/nestcl_kernel_keys.h"
#include "nestcl/nestcl_manager_types.h"
#include "nestcl/nestcl_resident.h"
#include "nestcl/nestcl_synapse_export.h"

namespace nest
{
struct NestclManager::Impl : KeySettings,
                             FractionState,
                             BlockState,
                             ExportState,
                             DeliveryState,
                             LoopState,
                             ResidentState
{
  double t_prepare = 0.0;  // seconds of the Prepares: packing and export

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
