/*
 * nestcl inside NEST (nest_patch): the manager that NEST's KernelManager runs
 * last, after the NodeManager. It owns the kernel status keys nestcl_*, and for
 * the threads that are stream VPs (the last nestcl_streams of the
 * local_num_threads) it updates the translated neurons on an OpenCL device.
 *
 * Per Simulate(): prepare() packs each stream thread's neurons, grouped by
 * model, into device-resident blocks (nestcl/block.h) through the generated
 * glue; in every slice update() drains the input that NEST delivered into the
 * nodes' own ring buffers (spikes from any synapse or device, currents) into
 * the block, runs the model's kernel, hands each spike to NEST as the model's
 * update() would (set_spiketime, event_delivery_manager.send) and, where a
 * multimeter listens, puts each step's state into the node's own logger;
 * cleanup() writes the state back into the nodes, so GetStatus and SetStatus
 * between Simulate calls see and change the device state. A stream VP is
 * hybrid: a neuron whose model did not translate, or that a condition keeps
 * off the device, stays on the host, and update() runs its own update() in
 * its place among the device's neurons, so that spikes leave in NEST's order
 * (the kernel key nestcl_nodes says, per model, which ran where and why).
 * A stream VP whose translated neurons are too few to pay for a launch and a
 * wait per slice (neurons x min_delay steps below nestcl_device_min_work,
 * default 64) runs their translated C loops on its own thread instead
 * (nestcl/block.h, on_host): same results, no device work; their synapses
 * stay with NEST's connectors (nestcl_nodes counts them as "c_loop").
 *
 * prepare() also exports the thread's static synapses from NEST's connectors
 * into device CSR rows (one row per source's run of lcids, as NEST's
 * connectors hold them), so that deliver() hands the spikes a stream VP
 * receives to the device instead of calling the neurons' handle(); and with
 * nestcl_device_poisson it moves each poisson_generator whose targets on the
 * thread are all device neurons onto the device (Philox draws). STDP
 * connections of translated synapse models (stdp_pl_synapse_hom, ...) onto
 * device neurons go to the device too, with their targets' spike histories,
 * and are written back into NEST's connections and nodes by cleanup().
 *
 * This header is included by NEST's kernel_manager.cpp,
 * simulation_manager.cpp and event_delivery_manager.cpp; it is stable, so
 * that nestcl's own changes rebuild only the manager's files. Those share the
 * manager's state through nestcl_manager_impl.h, which lists them by role.
 */
#ifndef NESTCL_MANAGER_H
#define NESTCL_MANAGER_H

#include <memory>
#include <string>
#include <vector>

#include "dictionary.h"
#include "manager_interface.h"
#include "nest_time.h"
#include "node.h"
#include "spike_data.h"

namespace nest
{
class SimulationManager;

class NestclManager : public ManagerInterface
{
public:
  NestclManager();
  ~NestclManager() override;

  void initialize( const bool adjust_number_of_threads_or_rng_only ) override;
  void finalize( const bool adjust_number_of_threads_or_rng_only ) override;
  void set_status( const Dictionary& ) override;
  void get_status( Dictionary& ) override;
  void prepare() override;
  void cleanup() override;

  /* Simulation hook: updates thread tid's device neurons through lags [from, to); nothing on a CPU thread. */
  void update( size_t tid, const Time& origin, long from, long to );

  /*
   * Delivery hook (EventDeliveryManager::deliver_events): on a stream thread
   * whose static synapses are resident on the device, delivers the received
   * spikes, those synapses' on the device and the others through NEST's
   * connectors as NEST would, and returns true; false leaves the thread to
   * NEST's own deliver_events_.
   */
  bool deliver( size_t tid, const std::vector< SpikeData >& recv_buffer );

  /*
   * Run hook (SimulationManager::update_): when prepare() found that one
   * stream VP holds the whole network and its slices need nothing but the
   * device, runs the Run's slices in the device loop (nestcl_device_loop.cpp)
   * and returns true; false leaves them to NEST's own loop.
   */
  bool run_device_loop( SimulationManager& sm );

  /*
   * Placement hook (nestcl_placement::before_create): before the first Create
   * of neurons, nestcl_gpu_fraction "auto" with both kinds of VP takes the
   * share from the device's performance profile, when there is one.
   */
  void choose_split( size_t n_neurons );

  /*
   * The doors through which NEST reads and changes the network between
   * Simulate calls, while it stays on the device (nestcl_resident.cpp):
   * Node::get_status_base and ConnectionManager::get_synapse_status first
   * bring back the device state of the node's block or the connection's
   * synapse model; Node::set_status_base and set_synapse_status do so too and
   * mark it, so that the next Prepare or Run sends it; SimulationManager's
   * prepare, before NEST re-sorts connections that changed or takes new
   * nodes, brings back what a re-sort would move. Nothing happens while no
   * state is resident.
   */
  void
  before_node_read( const Node& node )
  {
    if ( resident_ )
    {
      sync_node( node, nullptr );
    }
  }
  void
  before_node_write( const Node& node, const Dictionary& d )
  {
    if ( resident_ )
    {
      sync_node( node, &d );
    }
  }
  void
  before_synapse_read( size_t tid, synindex syn_id )
  {
    if ( resident_ )
    {
      sync_synapses( tid, syn_id, nullptr );
    }
  }
  void
  before_synapse_write( size_t tid, synindex syn_id, const Dictionary& d )
  {
    if ( resident_ )
    {
      sync_synapses( tid, syn_id, &d );
    }
  }
  void before_network_update();

  /*
   * Whether NEST's own loop must skip this node of thread tid: update() runs it,
   * on the device, or on the host with its own update() in NEST's order among
   * the device's neurons (a neuron that cannot run on the device); or it is a
   * poisson_generator drawn on the device.
   */
  bool
  on_device( size_t tid, const Node& node ) const
  {
    return tid < on_device_.size() and node.get_thread_lid() < on_device_[ tid ].size()
      and on_device_[ tid ][ node.get_thread_lid() ];
  }

private:
  /* Why nestcl_gpu_fraction = fraction cannot hold with this many streams, or empty. */
  std::string fraction_problem( long streams, double fraction ) const;
  /* Starts or ends weighted placement (nestcl_placement.h) for the current keys. */
  void place();
  /* After a Simulate: what it measured, and the share the model recommends for this network. */
  void measure_split();

  /* The node's block's state back from the device (once); for a write (d), marked to be sent again. */
  void sync_node( const Node& node, const Dictionary* d );
  /* Thread tid's synapses of syn_id back from the device (once); for a write (d), marked to be sent again. */
  void sync_synapses( size_t tid, synindex syn_id, const Dictionary* d );

  struct Impl;
  std::unique_ptr< Impl > impl_;
  bool resident_ = false;                         // a stream VP's blocks are on the device between Simulate calls
  std::vector< std::vector< char > > on_device_;  // per thread, by thread-local node index
};

/* The one instance, listed last among NEST's managers. */
NestclManager& nestcl_manager();
}

#endif
