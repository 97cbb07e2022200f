/*
 * Reading a checkpoint's files (checkpoint.c describes the whole): every rank
 * file of one rank count read whole and checked (size, magic, version,
 * checksums, network hash, partition, section table, coverage of every
 * neuron) before anything is built.
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

void eng_ck_set_free(ck_set *s)
{
  for (int k = 0; s->f && k < s->n; ++k) {
    free(s->f[k].data);
    free(s->f[k].sec);
  }
  free(s->f);
  memset(s, 0, sizeof *s);
}

int eng_ck_bad_file(const ck_file *f, const char *what)
{
  return nestcl_set_error(NESTCL_EINVAL, "%s: %s; the checkpoint is refused", f->path, what);
}

/* The whole file into f->data (f->size bytes). */
static int slurp_file(ck_file *f)
{
  FILE *in = fopen(f->path, "rb");
  if (!in) {
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno));
  }
  struct stat st;
  if (fstat(fileno(in), &st) != 0) {
    fclose(in);
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno));
  }
  f->size = (size_t)st.st_size;
  f->data = malloc(f->size ? f->size : 1);
  if (!f->data) {
    fclose(in);
    return nestcl_set_error(NESTCL_ENOMEM, "%s: out of host memory for %zu bytes", f->path, f->size);
  }
  size_t got = fread(f->data, 1, f->size, in);
  int err = ferror(in);
  fclose(in);
  if (got != f->size || err) {
    return nestcl_set_error(NESTCL_EIO, "%s: cannot read: %s", f->path, strerror(errno ? errno : EIO));
  }
  return 0;
}

/*
 * The file's framing: magic, version, the header's and the payload's sizes and
 * checksums; *hb is the size of the header with its section table.
 */
static int check_framing(const ck_file *f, uint32_t *hb)
{
  const unsigned char *d = f->data;
  if (f->size < CK_HEADER) {
    if (f->size >= 8 && memcmp(d, CK_MAGIC, 8) != 0) {
      return eng_ck_bad_file(f, "not a nestcl checkpoint (wrong magic)");
    }
    char msg[160];
    snprintf(msg, sizeof msg, "truncated (%zu bytes, shorter than the %u-byte header)", f->size, CK_HEADER);
    return eng_ck_bad_file(f, msg);
  }
  if (memcmp(d, CK_MAGIC, 8) != 0) {
    return eng_ck_bad_file(f, "not a nestcl checkpoint (wrong magic)");
  }
  uint32_t version = get_u32(d + 8);
  if (version != CK_VERSION) {
    char msg[160];
    snprintf(msg, sizeof msg, "format version %u; this nestcl reads version %u", version, CK_VERSION);
    return eng_ck_bad_file(f, msg);
  }
  uint32_t n_sec = get_u32(d + 92);
  uint64_t payload = get_u64(d + 96);
  *hb = get_u32(d + 12);
  if (*hb != CK_HEADER + (uint64_t)n_sec * CK_ENTRY || n_sec > 1000000u) {
    return eng_ck_bad_file(f, "corrupt header (section table size)");
  }
  if (f->size < *hb || f->size - *hb < payload) {
    char msg[200];
    snprintf(msg, sizeof msg, "truncated (%zu bytes of %llu)", f->size, (unsigned long long)*hb + payload);
    return eng_ck_bad_file(f, msg);
  }
  uint32_t ct[256];
  eng_crc32_table(ct);
  uint32_t hc = eng_crc32_update(ct, 0, d, 124);
  hc = eng_crc32_update(ct, hc, d + CK_HEADER, *hb - CK_HEADER);
  if (hc != get_u32(d + 124)) {
    return eng_ck_bad_file(f, "corrupt header (checksum mismatch)");
  }
  if (f->size - *hb != payload) {
    char msg[200];
    snprintf(msg, sizeof msg, "%zu bytes where the header announces %llu", f->size, (unsigned long long)*hb + payload);
    return eng_ck_bad_file(f, msg);
  }
  uint32_t pc = eng_crc32_update(ct, 0, d + *hb, payload);
  if (pc != get_u32(d + 120)) {
    char msg[200];
    snprintf(msg, sizeof msg, "corrupt (checksum mismatch: stored %08x, computed %08x)", get_u32(d + 120), pc);
    return eng_ck_bad_file(f, msg);
  }
  return 0;
}

/* The header names this network (hash and description), this rank of ranks, and a usable step. */
static int check_identity(const nestcl_engine *e, const ck_file *f, int rank, int ranks, uint64_t hash)
{
  const unsigned char *d = f->data;
  uint64_t fh = get_u64(d + 16);
  if (fh != hash) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s: the checkpoint was written for another network (its network hash %016llx, this "
                            "network's %016llx): restore needs the same populations, parameters, connections, "
                            "inputs, resolution, delays, weight type and seed",
                            f->path, (unsigned long long)fh, (unsigned long long)hash);
  }
  if ((int)get_u32(d + 40) != rank || (int)get_u32(d + 44) != ranks) {
    return eng_ck_bad_file(f, "its header names another rank than its file name");
  }
  int64_t lo, hi;
  eng_delay_steps(e, &lo, &hi);
  if (get_u64(d + 64) != e->desc.n_global || (int)get_u32(d + 72) != e->desc.n_pops ||
      (int)get_u32(d + 76) != e->desc.n_projs || get_f64(d + 32) != e->desc.cfg.resolution_ms ||
      get_u32(d + 80) != (uint64_t)lo || get_u32(d + 84) != (uint64_t)hi || get_u32(d + 88) != (uint64_t)(lo + hi)) {
    return eng_ck_bad_file(f, "it describes another network than its hash says (corrupt)");
  }
  /* the clock the restore sets: a negative (or absurd) step would place ring slots outside the ring */
  if (get_u64(d + 24) > (uint64_t)INT64_MAX / 4) {
    return eng_ck_bad_file(f, "its step is negative or out of range (corrupt)");
  }
  return 0;
}

/* The section table (after the header, hb bytes with it): sections back to back, filling the file. */
static int read_section_table(ck_file *f, uint32_t hb)
{
  const unsigned char *d = f->data;
  uint32_t n_sec = get_u32(d + 92);
  f->n_sec = (int)n_sec;
  f->sec = calloc(n_sec ? n_sec : 1, sizeof *f->sec);
  if (!f->sec) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  uint64_t at = hb;
  for (uint32_t s = 0; s < n_sec; ++s) {
    const unsigned char *t = d + CK_HEADER + (size_t)s * CK_ENTRY;
    ck_section *c = &f->sec[s];
    c->tag = get_u32(t);
    c->index = get_u32(t + 4);
    c->offset = get_u64(t + 8);
    c->bytes = get_u64(t + 16);
    c->count = get_u64(t + 24);
    if (c->offset != at || c->bytes > f->size - at) {
      return eng_ck_bad_file(f, "corrupt section table");
    }
    at += c->bytes;
  }
  if (at != f->size) {
    return eng_ck_bad_file(f, "corrupt section table (sections do not fill the file)");
  }
  return 0;
}

/* Reads and checks one rank file whole: size, magic, version, checksums, hash, partition, section table. */
static int read_file(const nestcl_engine *e, ck_file *f, int rank, int ranks, uint64_t hash)
{
  uint32_t hb = 0;
  int rc = slurp_file(f);
  if (!rc)
    rc = check_framing(f, &hb);
  if (!rc)
    rc = check_identity(e, f, rank, ranks, hash);
  if (rc) {
    return rc;
  }
  f->step = get_u64(f->data + 24);
  f->spikes_total = get_u64(f->data + 104);
  f->events_total = get_u64(f->data + 112);
  return read_section_table(f, hb);
}

const ck_section *eng_ck_find_section(const ck_file *f, uint32_t tag, uint32_t index)
{
  for (int s = 0; s < f->n_sec; ++s) {
    if (f->sec[s].tag == tag && f->sec[s].index == index) {
      return &f->sec[s];
    }
  }
  return NULL;
}

static int missing_section(const ck_file *f, const char *what, int index)
{
  char msg[200];
  snprintf(msg, sizeof msg, "no %s section for %d, or one of the wrong size (corrupt)", what, index);
  return eng_ck_bad_file(f, msg);
}

/*
 * The per-neuron sections (NEUR, RING, HIST) of population p: sizes, and that
 * the files' ranges tile the population exactly.
 */
static int check_tiling(const nestcl_engine *e, const ck_set *s, uint32_t tag, const char *what, int p)
{
  const eng_population *pop = &e->desc.pops[p];
  uint64_t covered = 0;
  /* Ranks hold contiguous, increasing ranges: file k's must start where file k - 1's ended. */
  for (int k = 0; k < s->n; ++k) {
    const ck_file *f = &s->f[k];
    const ck_section *c = eng_ck_find_section(f, tag, (uint32_t)p);
    if (!c || c->bytes < 16) {
      return missing_section(f, what, p);
    }
    const unsigned char *d = f->data + c->offset;
    uint64_t first = get_u64(d), n = get_u64(d + 8);
    size_t want = 16;
    if (tag == TAG_NEUR) {
      want += n * eng_ck_neuron_bytes(pop);
    } else if (tag == TAG_RING) {
      int64_t lo, hi;
      eng_delay_steps(e, &lo, &hi); /* the ring's slots as the build will make them */
      want += n * (uint64_t)pop->n_channels * (uint64_t)(lo + hi) * 8;
    } else {
      if (c->bytes < 24) {
        return missing_section(f, what, p);
      }
      uint64_t entries = get_u64(d + 16);
      want += 8 + n * 40 + entries * 28;
    }
    if (c->bytes != want || n > pop->n) {
      return missing_section(f, what, p);
    }
    if (n && first != pop->first + covered) {
      return eng_ck_bad_file(f, "its neurons do not continue the previous rank's (corrupt)");
    }
    covered += n;
  }
  if (covered != pop->n) {
    return nestcl_set_error(NESTCL_EINVAL, "checkpoint: the files hold %llu of the %u neurons of population %d",
                            (unsigned long long)covered, pop->n, p);
  }
  return 0;
}

/* Lists DIR's rank files (one rank count), reads and checks them all. */
int eng_ck_load_set(const nestcl_engine *e, const char *dir, ck_set *s)
{
  memset(s, 0, sizeof *s);
  DIR *d = opendir(dir);
  if (!d) {
    return nestcl_set_error(NESTCL_EIO, "restore: cannot open the checkpoint folder %s: %s", dir, strerror(errno));
  }
  int R = 0, other = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int r, n, end = 0;
    if (sscanf(de->d_name, "rank-%d-of-%d.nestcl-ckpt%n", &r, &n, &end) == 2 && de->d_name[end] == 0 && n > 0 &&
        r >= 0 && r < n) {
      if (R && n != R) {
        other = n;
      }
      R = R ? R : n;
    }
  }
  closedir(d);
  if (!R) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: no checkpoint in %s (no rank-<r>-of-<R>.nestcl-ckpt files)", dir);
  }
  if (other) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: %s holds checkpoints of %d and of %d ranks; keep one", dir, R,
                            other);
  }
  if (R > 65536) {
    return nestcl_set_error(NESTCL_EINVAL, "restore: %d rank files", R);
  }
  s->f = calloc((size_t)R, sizeof *s->f);
  if (!s->f) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  s->n = R;
  uint64_t hash = eng_network_hash(e);
  for (int r = 0; r < R; ++r) {
    eng_ck_file_name(s->f[r].path, sizeof s->f[r].path, dir, r, R);
    if (access(s->f[r].path, F_OK) != 0) {
      return nestcl_set_error(NESTCL_EINVAL, "restore: the checkpoint in %s is incomplete: %s is missing", dir,
                              s->f[r].path);
    }
  }
  for (int r = 0; r < R; ++r) {
    ck_file *f = &s->f[r];
    int rc = read_file(e, f, r, R, hash);
    if (rc) {
      return rc;
    }
    if (f->step != s->f[0].step) {
      return nestcl_set_error(NESTCL_EINVAL, "restore: %s is of step %llu, %s of step %llu: not one checkpoint",
                              f->path, (unsigned long long)f->step, s->f[0].path, (unsigned long long)s->f[0].step);
    }
  }
  for (int p = 0; p < e->desc.n_pops; ++p) {
    int rc = check_tiling(e, s, TAG_NEUR, "neuron", p);
    if (!rc)
      rc = check_tiling(e, s, TAG_RING, "ring", p);
    if (!rc && eng_ck_pop_has_history(e, p))
      rc = check_tiling(e, s, TAG_HIST, "spike history", p);
    if (rc) {
      return rc;
    }
  }
  for (int k = 0; k < R; ++k) {
    const ck_file *f = &s->f[k];
    const ck_section *c = eng_ck_find_section(f, TAG_CSRS, 0);
    if (!c || c->bytes != c->count * CSR_REC) {
      return missing_section(f, "static synapse", 0);
    }
    for (int j = 0; j < e->desc.n_projs; ++j) {
      const eng_projection *pr = &e->desc.projs[j];
      if (!pr->sm) {
        continue;
      }
      c = eng_ck_find_section(f, TAG_PLAS, (uint32_t)j);
      if (!c || c->bytes != c->count * eng_ck_plas_rec_bytes(pr)) {
        return missing_section(f, "plastic synapse", j);
      }
      c = eng_ck_find_section(f, TAG_PSRC, (uint32_t)j);
      if (!c || c->bytes != c->count * eng_ck_psrc_rec_bytes(pr)) {
        return missing_section(f, "per-source state", j);
      }
    }
  }
  return 0;
}
