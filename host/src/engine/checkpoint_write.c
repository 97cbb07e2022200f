/*
 * Writing a checkpoint (nestcl_engine_checkpoint; checkpoint.c describes the
 * whole): each rank's sections through a writer that keeps the running CRC
 * and the section table, then the header, into a temporary file renamed into
 * place.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint_internal.h"
#include "core/nestcl_core.h"

typedef struct ck_writer {
  FILE *f;
  uint32_t crc_t[256];
  uint32_t crc;
  uint64_t pos;
  int err;
  ck_section *sec;
  int n_sec, cap_sec;
} ck_writer;

static void w_bytes(ck_writer *w, const void *p, size_t n)
{
  if (w->err || n == 0) {
    return;
  }
  if (fwrite(p, 1, n, w->f) != n) {
    w->err = errno ? errno : EIO;
    return;
  }
  w->crc = eng_crc32_update(w->crc_t, w->crc, p, n);
  w->pos += n;
}
static void w_u64(ck_writer *w, uint64_t v)
{
  w_bytes(w, &v, 8);
}
static void w_u32(ck_writer *w, uint32_t v)
{
  w_bytes(w, &v, 4);
}
static void w_f64(ck_writer *w, double v)
{
  w_bytes(w, &v, 8);
}

static int sec_begin(ck_writer *w, uint32_t tag, uint32_t index, uint64_t count)
{
  if (w->n_sec == w->cap_sec) {
    int cap = w->cap_sec ? 2 * w->cap_sec : 16;
    ck_section *s = realloc(w->sec, (size_t)cap * sizeof *s);
    if (!s) {
      return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    }
    w->sec = s;
    w->cap_sec = cap;
  }
  ck_section *s = &w->sec[w->n_sec++];
  s->tag = tag;
  s->index = index;
  s->offset = w->pos;
  s->count = count;
  s->bytes = 0;
  return 0;
}

static void sec_end(ck_writer *w)
{
  ck_section *s = &w->sec[w->n_sec - 1];
  s->bytes = w->pos - s->offset;
}

/* NEUR of population p: the rank's neurons (first gid, count), then field after field, [element][neuron]. */
static int write_neur(nestcl_engine *e, ck_writer *w, const blk_view *views, int p)
{
  const int P = e->desc.n_pops;
  const eng_population *pop = &e->desc.pops[p];
  const nestcl_model *m = pop->model;
  uint64_t first, n;
  eng_ck_rank_range(e, p, &first, &n);
  int rc = sec_begin(w, TAG_NEUR, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  for (int f = 0; f < m->n_fields; ++f) {
    size_t z = nestcl_field_type_size(m->fields[f].type), L = nestcl_field_len(&m->fields[f], pop->K);
    for (size_t k = 0; k < L; ++k) {
      for (int v = 0; v < e->n_vps; ++v) {
        const eng_block *b = &e->vps[v].blocks[p];
        if (b->n) {
          w_bytes(w, (const char *)views[v * P + p].fields[f] + k * b->n * z, b->n * z);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* RING of population p: [k][channel][neuron] for the steps origin + k, k = 0 .. ring_slots - 1. */
static int write_ring(nestcl_engine *e, ck_writer *w, const blk_view *views, int p)
{
  const int P = e->desc.n_pops;
  const int64_t step = e->clock.origin;
  uint64_t first, n;
  eng_ck_rank_range(e, p, &first, &n);
  int rc = sec_begin(w, TAG_RING, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  for (int k = 0; k < e->clock.ring_slots; ++k) {
    uint32_t slot = (uint32_t)((step + k) % e->clock.ring_slots);
    for (uint32_t ch = 0; ch < e->desc.pops[p].n_channels; ++ch) {
      for (int v = 0; v < e->n_vps; ++v) {
        const eng_block *b = &e->vps[v].blocks[p];
        if (b->n) {
          w_bytes(w, views[v * P + p].ring + ((size_t)slot * b->n_channels + ch) * b->n, (size_t)b->n * 8);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* HIST of population p (one with a spike history): per-neuron arrays, then the entries oldest first. */
static int write_hist(nestcl_engine *e, ck_writer *w, int p)
{
  uint64_t first, n, entries = 0;
  eng_ck_rank_range(e, p, &first, &n);
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[p];
    for (uint32_t i = 0; i < b->n; ++i) {
      entries += ((const uint32_t *)b->hist.a[ENG_H_LEN])[i];
    }
  }
  int rc = sec_begin(w, TAG_HIST, (uint32_t)p, n);
  if (rc) {
    return rc;
  }
  w_u64(w, first);
  w_u64(w, n);
  w_u64(w, entries);
  static const int per_neuron[] = {ENG_H_LEN, ENG_H_NIN, ENG_H_KM, ENG_H_KMT, ENG_H_LAST, ENG_H_MAXD};
  for (size_t a = 0; a < sizeof per_neuron / sizeof *per_neuron; ++a) {
    int arr = per_neuron[a];
    size_t z = arr == ENG_H_LEN || arr == ENG_H_NIN ? 4 : 8;
    for (int v = 0; v < e->n_vps; ++v) {
      const eng_block *b = &e->vps[v].blocks[p];
      if (b->n) {
        w_bytes(w, b->hist.a[arr], (size_t)b->n * z);
      }
    }
  }
  static const int per_entry[] = {ENG_H_T, ENG_H_KMINUS, ENG_H_KMINUS_TRIPLET, ENG_H_ACCESS};
  for (size_t a = 0; a < sizeof per_entry / sizeof *per_entry; ++a) {
    int arr = per_entry[a];
    size_t z = arr == ENG_H_ACCESS ? 4 : 8;
    for (int v = 0; v < e->n_vps; ++v) {
      eng_block *b = &e->vps[v].blocks[p];
      nestcl_history hv = eng_hist_view(&b->hist);
      for (uint32_t i = 0; i < b->n; ++i) {
        for (uint32_t k = 0; k < hv.len[i]; ++k) {
          w_bytes(w, (const char *)b->hist.a[arr] + nestcl_hist_slot(&hv, i, k) * z, z);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* CSRS: the static synapses onto the rank's neurons, block by block, row by row. */
static int write_csrs(nestcl_engine *e, ck_writer *w, const blk_view *views)
{
  const int P = e->desc.n_pops;
  uint64_t count = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      count += e->vps[v].blocks[p].nnz;
    }
  }
  int rc = sec_begin(w, TAG_CSRS, 0, count);
  if (rc) {
    return rc;
  }
  int wd = e->desc.cfg.weight_type == NESTCL_WEIGHT_DOUBLE;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      const blk_view *bv = &views[v * P + p];
      if (b->nnz == 0) {
        continue;
      }
      for (uint64_t s = 0; s < e->desc.n_global; ++s) {
        for (uint64_t k = bv->row_ptr[s]; k < bv->row_ptr[s + 1]; ++k) {
          uint32_t t = bv->target[k];
          double wt = wd ? ((const double *)bv->weight)[k] : (double)((const float *)bv->weight)[k];
          w_u64(w, s);
          w_u64(w, b->first_gid + (t & NESTCL_TARGET_INDEX_MASK));
          w_u32(w, t >> NESTCL_TARGET_INDEX_BITS);
          w_u32(w, bv->delay ? bv->delay[k] : b->delay_hom);
          w_f64(w, wt);
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* PLAS of projection j (translated synapses): each synapse's (source, target, delay) and its state. */
static int write_plas(nestcl_engine *e, ck_writer *w, const blk_view *views, int j)
{
  const int P = e->desc.n_pops;
  const eng_projection *pr = &e->desc.projs[j];
  const eng_syn_layout *L = &pr->lay;
  uint64_t count = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      count += b->plastic[q].proj == j ? b->plastic[q].nnz : 0;
    }
  }
  int rc = sec_begin(w, TAG_PLAS, (uint32_t)j, count);
  if (rc) {
    return rc;
  }
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      const pl_view *pv = &views[v * P + pr->tgt].pl[q];
      if (pl->proj != j) {
        continue;
      }
      for (uint32_t r = 0; r < pl->n_rows; ++r) {
        for (uint64_t k = pl->row_ptr[r]; k < pl->row_ptr[r + 1]; ++k) {
          w_u64(w, pl->src_first + r);
          w_u64(w, b->first_gid + pv->target[k]);
          w_u32(w, pv->delay ? pv->delay[k] : pl->delay_hom);
          w_u32(w, 0);
          for (int f = 0; f < L->n_state; ++f) {
            size_t z = eng_syn_field_size(&pr->sm->fields[L->state_f[f]]);
            w_bytes(w, pv->state + L->state_off[f] * pl->nnz + k * z, z);
          }
        }
      }
    }
  }
  sec_end(w);
  return 0;
}

/* The source rows of projection j that have synapses on this rank, marked in seen; returns their count. */
static uint64_t mark_source_rows(const nestcl_engine *e, int j, unsigned char *seen)
{
  const eng_projection *pr = &e->desc.projs[j];
  uint64_t rows = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      for (uint32_t r = 0; pl->proj == j && r < pl->n_rows; ++r) {
        if (pl->row_ptr[r + 1] > pl->row_ptr[r] && !seen[r]) {
          seen[r] = 1;
          rows++;
        }
      }
    }
  }
  return rows;
}

/* PSRC of projection j: the per-source state, each source row once, from the first block that holds synapses of it. */
static int write_psrc(nestcl_engine *e, ck_writer *w, const blk_view *views, int j)
{
  const int P = e->desc.n_pops;
  const eng_projection *pr = &e->desc.projs[j];
  const eng_syn_layout *L = &pr->lay;
  uint32_t n_rows = e->desc.pops[pr->src].n;
  unsigned char *seen = calloc(n_rows ? n_rows : 1, 1);
  if (!seen) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  uint64_t rows = mark_source_rows(e, j, seen);
  memset(seen, 0, n_rows ? n_rows : 1);
  int rc = sec_begin(w, TAG_PSRC, (uint32_t)j, rows);
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    const eng_block *b = &e->vps[v].blocks[pr->tgt];
    for (int q = 0; q < b->n_plastic; ++q) {
      const eng_plastic *pl = &b->plastic[q];
      const pl_view *pv = &views[v * P + pr->tgt].pl[q];
      for (uint32_t r = 0; pl->proj == j && r < pl->n_rows; ++r) {
        if (pl->row_ptr[r + 1] == pl->row_ptr[r] || seen[r]) {
          continue;
        }
        seen[r] = 1;
        w_u64(w, pl->src_first + r);
        for (int f = 0; f < L->n_src; ++f) {
          size_t z = eng_syn_field_size(&pr->sm->fields[L->src_f[f]]);
          w_bytes(w, pv->src_state + L->src_off[f] * pl->n_rows + (size_t)r * z, z);
        }
      }
    }
  }
  free(seen);
  if (!rc)
    sec_end(w);
  return rc;
}

/* The sections of this rank into w, in the order of the format: views[v * n_pops + p] are the blocks' open views. */
static int write_sections(nestcl_engine *e, ck_writer *w, blk_view *views)
{
  int rc = 0;
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    rc = write_neur(e, w, views, p);
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    rc = write_ring(e, w, views, p);
  }
  for (int p = 0; p < e->desc.n_pops && !rc; ++p) {
    if (eng_ck_pop_has_history(e, p)) {
      rc = write_hist(e, w, p);
    }
  }
  if (!rc) {
    rc = write_csrs(e, w, views);
  }
  for (int j = 0; j < e->desc.n_projs && !rc; ++j) {
    if (e->desc.projs[j].sm) {
      rc = write_plas(e, w, views, j);
      if (!rc)
        rc = write_psrc(e, w, views, j);
    }
  }
  return rc;
}

/* The header and section table (docs/checkpoint-format.md) into buf of CK_HEADER + n_sec * CK_ENTRY bytes. */
static void make_header(const nestcl_engine *e, const ck_writer *w, uint64_t hash, uint64_t payload,
                        uint32_t payload_crc, unsigned char *buf)
{
  size_t hb = CK_HEADER + (size_t)w->n_sec * CK_ENTRY;
  memset(buf, 0, hb);
  memcpy(buf, CK_MAGIC, 8);
  put_u32(buf + 8, CK_VERSION);
  put_u32(buf + 12, (uint32_t)hb);
  put_u64(buf + 16, hash);
  put_u64(buf + 24, (uint64_t)e->clock.origin);
  put_f64(buf + 32, e->desc.cfg.resolution_ms);
  put_u32(buf + 40, (uint32_t)e->exchange.rank);
  put_u32(buf + 44, (uint32_t)e->exchange.n_ranks);
  put_u32(buf + 48, (uint32_t)e->desc.cfg.cpu_threads);
  put_u32(buf + 52, (uint32_t)e->desc.cfg.gpu_streams);
  put_f64(buf + 56, e->desc.cfg.gpu_fraction);
  put_u64(buf + 64, e->desc.n_global);
  put_u32(buf + 72, (uint32_t)e->desc.n_pops);
  put_u32(buf + 76, (uint32_t)e->desc.n_projs);
  put_u32(buf + 80, (uint32_t)e->clock.min_delay);
  put_u32(buf + 84, (uint32_t)e->clock.max_delay);
  put_u32(buf + 88, (uint32_t)e->clock.ring_slots);
  put_u32(buf + 92, (uint32_t)w->n_sec);
  put_u64(buf + 96, payload);
  put_u64(buf + 104, e->stats.spikes_total);
  put_u64(buf + 112, e->stats.events_total);
  put_u32(buf + 120, payload_crc);
  for (int s = 0; s < w->n_sec; ++s) {
    unsigned char *t = buf + CK_HEADER + (size_t)s * CK_ENTRY;
    put_u32(t, w->sec[s].tag);
    put_u32(t + 4, w->sec[s].index);
    put_u64(t + 8, w->sec[s].offset);
    put_u64(t + 16, w->sec[s].bytes);
    put_u64(t + 24, w->sec[s].count);
  }
  uint32_t ct[256];
  eng_crc32_table(ct);
  uint32_t hc = eng_crc32_update(ct, 0, buf, 124);
  hc = eng_crc32_update(ct, hc, buf + CK_HEADER, hb - CK_HEADER);
  put_u32(buf + 124, hc);
}

static int write_file(nestcl_engine *e, const char *dir)
{
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    return nestcl_set_error(NESTCL_EIO, "checkpoint: cannot create %s: %s", dir, strerror(errno));
  }
  char path[4096], tmp[4200];
  eng_ck_file_name(path, sizeof path, dir, e->exchange.rank, e->exchange.n_ranks);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  const int P = e->desc.n_pops;
  blk_view *views = calloc((size_t)e->n_vps * (size_t)P, sizeof *views);
  if (!views) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  int rc = 0;
  for (int v = 0; v < e->n_vps && !rc; ++v) {
    for (int p = 0; p < P && !rc; ++p) {
      rc = eng_ck_view_open(e, &e->vps[v], &e->vps[v].blocks[p], 1, &views[v * P + p]);
    }
  }
  ck_writer w;
  memset(&w, 0, sizeof w);
  eng_crc32_table(w.crc_t);
  /* Sections: neurons and ring per population, histories, the static CSR, two per plastic projection. */
  int n_sec = 2 * P + 1;
  for (int p = 0; p < P; ++p) {
    n_sec += eng_ck_pop_has_history(e, p);
  }
  for (int j = 0; j < e->desc.n_projs; ++j) {
    n_sec += e->desc.projs[j].sm ? 2 : 0;
  }
  size_t hb = CK_HEADER + (size_t)n_sec * CK_ENTRY;
  if (!rc) {
    w.f = fopen(tmp, "wb");
    unsigned char zero[CK_ENTRY] = {0};
    for (size_t k = 0; w.f && k < hb; k += CK_ENTRY) {
      if (fwrite(zero, 1, CK_ENTRY, w.f) != CK_ENTRY) {
        w.err = errno ? errno : EIO;
      }
    }
    w.pos = hb;
    if (!w.f) {
      rc = nestcl_set_error(NESTCL_EIO, "checkpoint: cannot write %s: %s", tmp, strerror(errno));
    }
  }
  if (!rc) {
    rc = write_sections(e, &w, views);
  }
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < P; ++p) {
      eng_ck_view_drop_history(&e->vps[v].blocks[p], &views[v * P + p]);
      eng_ck_view_free(e, &e->vps[v].blocks[p], &views[v * P + p]);
    }
  }
  free(views);
  if (!rc && !w.err) {
    /* The header holds the sizes and checksums: written last, over the room left for it. */
    unsigned char *head = malloc(hb);
    if (!head) {
      rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
    } else if (w.n_sec != n_sec) {
      rc = nestcl_set_error(NESTCL_ERUNTIME, "internal: checkpoint of %d sections, %d expected", w.n_sec, n_sec);
    } else {
      make_header(e, &w, eng_network_hash(e), w.pos - hb, w.crc, head);
      if (fseek(w.f, 0, SEEK_SET) != 0 || fwrite(head, 1, hb, w.f) != hb || fflush(w.f) != 0 ||
          fsync(fileno(w.f)) != 0) {
        w.err = errno ? errno : EIO;
      }
    }
    free(head);
  }
  if (w.f) {
    if (fclose(w.f) != 0 && !w.err) {
      w.err = errno ? errno : EIO;
    }
    w.f = NULL;
    if (!rc && !w.err && rename(tmp, path) != 0) {
      w.err = errno ? errno : EIO;
    }
    if (rc || w.err) {
      remove(tmp);
    }
  }

  if (!rc && w.err) {
    rc = nestcl_set_error(NESTCL_EIO, "checkpoint: cannot write %s: %s", path, strerror(w.err));
  }
  free(w.sec);
  return rc;
}

/* Removes rank files of other rank counts (an older checkpoint in the same folder). */
static void remove_stale(const char *dir, int ranks)
{
  DIR *d = opendir(dir);
  if (!d) {
    return;
  }
  struct dirent *de;
  char path[4400];
  while ((de = readdir(d)) != NULL) {
    int r, R, end = 0;
    if (sscanf(de->d_name, "rank-%d-of-%d.nestcl-ckpt%n", &r, &R, &end) == 2 && de->d_name[end] == 0 && R != ranks) {
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      remove(path);
    }
  }
  closedir(d);
}

int nestcl_engine_checkpoint(nestcl_engine *e, const char *dir)
{
  if (!e || !dir || !*dir) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint: no folder given");
  }
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint before the network is built (simulate or prepare first)");
  }
  if (e->clock.lag != 0) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "checkpoint at t = %.10g ms: not the end of a super step; checkpoints are taken at "
                            "multiples of the min delay %.10g ms",
                            nestcl_engine_time_ms(e), (double)e->clock.min_delay * e->desc.cfg.resolution_ms);
  }
  int rc = eng_agree(e, write_file(e, dir));
  if (!rc && e->exchange.rank == 0) {
    remove_stale(dir, e->exchange.n_ranks);
  }
  eng_mpi_barrier(e);
  return rc;
}
