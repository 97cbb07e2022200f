/*
 * What the checkpoint's files share (checkpoint.c: shared parts,
 * checkpoint_write.c: writing, checkpoint_read.c: reading and checking,
 * checkpoint_restore.c: applying): the file format's constants and section
 * table (docs/checkpoint-format.md), little-endian field access, the sizes of
 * the records, the rank's neurons, a block's state in host memory, and the
 * files of a checkpoint as read.
 */
#ifndef NESTCL_CHECKPOINT_INTERNAL_H
#define NESTCL_CHECKPOINT_INTERNAL_H

#include <string.h>

#include "engine_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the checkpoint format is little-endian; this host is not"
#endif

#define CK_MAGIC "NESTCLCK"
#define CK_VERSION 1u
#define CK_HEADER 128u
#define CK_ENTRY 32u

/* Section tags (four characters, little-endian u32). */
#define CK_TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_NEUR CK_TAG('N', 'E', 'U', 'R')
#define TAG_RING CK_TAG('R', 'I', 'N', 'G')
#define TAG_HIST CK_TAG('H', 'I', 'S', 'T')
#define TAG_CSRS CK_TAG('C', 'S', 'R', 'S')
#define TAG_PLAS CK_TAG('P', 'L', 'A', 'S')
#define TAG_PSRC CK_TAG('P', 'S', 'R', 'C')

/* Static synapse record: source gid, target gid, channel, delay (steps), weight (as delivered, double). */
#define CSR_REC 32u

/* One entry of the section table: a section's tag and index, where it is, and how many records it holds. */
typedef struct ck_section {
  uint32_t tag, index;
  uint64_t offset, bytes, count;
} ck_section;

/* Little-endian fields of the header and the records (the host is little-endian, checked above). */
static inline void put_u32(unsigned char *p, uint32_t v)
{
  memcpy(p, &v, 4);
}
static inline void put_u64(unsigned char *p, uint64_t v)
{
  memcpy(p, &v, 8);
}
static inline void put_f64(unsigned char *p, double v)
{
  memcpy(p, &v, 8);
}
static inline uint32_t get_u32(const unsigned char *p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t get_u64(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline double get_f64(const unsigned char *p)
{
  double v;
  memcpy(&v, p, 8);
  return v;
}

/* ---- checkpoint.c: sizes, the rank's neurons, file names ---------------- */

/* Bytes of one neuron's fields (all of them, arrays expanded). */
size_t eng_ck_neuron_bytes(const eng_population *p);
/* Whether population p keeps a spike history (the target of a projection whose synapses read it). */
int eng_ck_pop_has_history(const nestcl_engine *e, int p);
/* Bytes of one PLAS record of projection pr (source, target, delay, pad, then its per-synapse state). */
size_t eng_ck_plas_rec_bytes(const eng_projection *pr);
/* Bytes of one PSRC record of projection pr (source, then its per-source state). */
size_t eng_ck_psrc_rec_bytes(const eng_projection *pr);
/* The rank's neurons of population p: its blocks are contiguous in gid, VP after VP. */
void eng_ck_rank_range(const nestcl_engine *e, int p, uint64_t *first, uint64_t *n);
/* DIR/rank-<rank>-of-<ranks>.nestcl-ckpt into out (cap bytes). */
void eng_ck_file_name(char *out, size_t cap, const char *dir, int rank, int ranks);

/* ---- checkpoint.c: a block's state in host memory ----------------------- */

/*
 * The arrays of one block that a checkpoint reads and a restore writes: a CPU
 * VP's own (aliased), or for a stream copies read back from the device (its
 * host copies went at the upload), written back by eng_ck_view_write_back.
 * Batched plastic sets keep their synapses in host memory: aliased too.
 */
typedef struct pl_view {
  uint32_t *target;
  uint16_t *delay;
  unsigned char *state, *src_state;
  int owned;
} pl_view;

typedef struct blk_view {
  void **fields;
  int64_t *ring;
  uint64_t *row_ptr;
  uint32_t *target;
  void *weight;
  uint16_t *delay;
  pl_view *pl;
  int owned;
  int hist_downloaded;
} blk_view;

/* Opens block b's view; csr: the static CSR too (a checkpoint writes it; a restore verifies it). */
int eng_ck_view_open(nestcl_engine *e, eng_vp *vp, eng_block *b, int csr, blk_view *v);
/* A stream's restored arrays back to the device (fields, ring, plastic state, history). */
int eng_ck_view_write_back(nestcl_engine *e, eng_vp *vp, eng_block *b, blk_view *v);
/* Drops a stream's downloaded history copy (the device keeps its own). */
void eng_ck_view_drop_history(eng_block *b, blk_view *v);
/* Frees what the view copied (nothing of an aliased one) and clears it. */
void eng_ck_view_free(const nestcl_engine *e, const eng_block *b, blk_view *v);

/* ---- checkpoint_read.c: the files of a checkpoint, read and checked whole ---- */

/* One rank file: its bytes and what its header says. */
typedef struct ck_file {
  char path[4400];
  unsigned char *data;
  size_t size;
  uint64_t step, spikes_total, events_total;
  int n_sec;
  ck_section *sec;
} ck_file;

typedef struct ck_set {
  ck_file *f;
  int n;
} ck_set;

/* Lists DIR's rank files (one rank count), reads and checks them all into *s. */
int eng_ck_load_set(const nestcl_engine *e, const char *dir, ck_set *s);
void eng_ck_set_free(ck_set *s);
/* The section (tag, index) of file f, or NULL (eng_ck_load_set has checked that the ones used exist). */
const ck_section *eng_ck_find_section(const ck_file *f, uint32_t tag, uint32_t index);
/* The refusal of a bad file: "<path>: <what>; the checkpoint is refused". */
int eng_ck_bad_file(const ck_file *f, const char *what);

#endif
