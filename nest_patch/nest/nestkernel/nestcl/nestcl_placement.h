/*
 * nestcl inside NEST (nest_patch): weighted node placement. NEST places node
 * id n on virtual process n % num_vps (round robin). When nestcl_gpu_fraction
 * asks for another share of the neurons on the stream VPs, each Create of
 * neurons is cut instead into one contiguous block of ids per VP, sized by the
 * VP's weight (the stream VPs share the fraction, the CPU VPs the rest), so
 * that a stream VP's neurons of one Create are one run of ids (one device
 * block). Devices (replicated on every thread) keep round robin.
 *
 * NEST's placement functions (VPManager::node_id_to_vp, node_id_to_lid,
 * lid_to_node_id, is_node_id_vp_local, NodeManager::add_neurons_ and
 * get_max_num_local_nodes, the SparseNodeArray's lookup estimate) call these
 * when active; otherwise they are NEST's own, unchanged. The table is a pure
 * function of the Create calls, so it is the same on every rank. Weighted
 * placement needs one MPI process (NEST's rank-local iterators assume round
 * robin over ranks) and refuses the thread-local iteration of the spatial and
 * tripartite connection rules.
 *
 * Included by NEST's vp_manager_impl.h: keep it small and stable.
 */
#ifndef NESTCL_PLACEMENT_H
#define NESTCL_PLACEMENT_H

#include <cstddef>
#include <vector>

namespace nest
{
namespace nestcl_placement
{
/* True while weighted placement is in force (set and cleared only outside parallel regions). */
extern bool active;

/* Starts weighted placement with one weight per VP (ResetKernel ends it: clear()). */
void start( const std::vector< double >& weights );
void clear();

/* Called by add_range before it registers a Create (nestcl_gpu_fraction "auto" decides there); may be null. */
extern void ( *before_create )( size_t n_neurons );

/* Registers the neurons [min_id, max_id] of one Create (called before NEST places them). */
void add_range( size_t min_id, size_t max_id );

/* The placement functions for node ids of registered Creates; others (devices) keep round robin. */
size_t vp_of( size_t node_id, size_t num_vps );
size_t lid_of( size_t node_id, size_t num_vps );
size_t node_id_of( size_t vp, size_t lid, size_t num_vps );
size_t max_local( size_t num_nodes, size_t num_vps );
/* The ids of VP vp in the Create that starts at min_id: [first, last] (last < first when none). */
size_t first( size_t vp, size_t min_id );
size_t last( size_t vp, size_t min_id );
/* The share of the neurons on vp (for SparseNodeArray's lookup estimate). */
double share( size_t vp, size_t num_vps );

/* Throws KernelException: NEST code that assumes round robin over VPs was reached. */
void refuse_thread_local();
}
}

#endif
