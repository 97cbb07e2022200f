/*
 * The argument indices of the engine's hand-written kernels
 * (kernels_templates/core/engine_kernels.cl) that the host sets one by one,
 * in the order of each kernel's signature there; change both together. The
 * plastic kernel's are PK_* (plastic_dev.h), the block's own kernels' beside
 * their source (block.c), the update's NESTCL_UARG_* (nestcl/update_args.h).
 */
#ifndef NESTCL_CORE_KERNEL_ARGS_H
#define NESTCL_CORE_KERNEL_ARGS_H

/* nestcl_deliver: one super step's spikes through a block's CSR synapses into its ring. */
enum nestcl_deliver_arg {
  DELIVER_SPIKES,
  DELIVER_N_SPIKES,
  DELIVER_ORIGIN,
  DELIVER_ROW_PTR,
  DELIVER_TARGET,
  DELIVER_WEIGHT,
  DELIVER_DELAY,
  DELIVER_DELAY_HOM,
  DELIVER_RING,
  DELIVER_RING_SLOTS,
  DELIVER_N,
  DELIVER_N_CHANNELS
};

/* nestcl_drive: a poisson_generator's or dc_generator's input of one block. */
enum nestcl_drive_arg {
  DRIVE_RING,
  DRIVE_N_CHANNELS,
  DRIVE_N,
  DRIVE_RING_SLOTS,
  DRIVE_CH,
  DRIVE_FIRST_GID,
  DRIVE_GEN,
  DRIVE_ORIGIN,
  DRIVE_FROM,
  DRIVE_TO,
  DRIVE_DELAY,
  DRIVE_VALUE,
  DRIVE_IS_POISSON,
  DRIVE_SEED,
  DRIVE_CDF,
  DRIVE_CDF_LEN,
  DRIVE_KSTOP,
  DRIVE_CHUNKS
};

/* nestcl_hist_append: a block's spikes of one super step into its spike history; the history's arrays from
   HIST_APPEND_HISTORY on (eng_hist_args). */
enum nestcl_hist_append_arg {
  HIST_APPEND_PAIRS,
  HIST_APPEND_N_PAIRS,
  HIST_APPEND_ORIGIN,
  HIST_APPEND_TICS_PER_STEP,
  HIST_APPEND_MS_PER_TIC,
  HIST_APPEND_TAU_MINUS_INV,
  HIST_APPEND_TAU_MINUS_TRIPLET_INV,
  HIST_APPEND_MIN_DELAY_MS,
  HIST_APPEND_EPS,
  HIST_APPEND_FUSED,
  HIST_APPEND_FLAG,
  HIST_APPEND_HISTORY
};

#endif
