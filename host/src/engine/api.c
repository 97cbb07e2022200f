/*
 * The engine's description API: configuration, populations, settings,
 * connections, inputs and recorders are checked and stored here as the user
 * gives them; nothing is drawn or allocated for the network until the first
 * simulate() (build.c). Errors name the offending value and the rule it breaks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

nestcl_value nestcl_constant(double v)
{
  nestcl_value r = {NESTCL_DIST_CONSTANT, v, 0.0, -INFINITY, INFINITY};
  return r;
}

nestcl_value nestcl_normal(double mean, double sd)
{
  nestcl_value r = {NESTCL_DIST_NORMAL, mean, sd, -INFINITY, INFINITY};
  return r;
}

nestcl_value nestcl_uniform(double low, double high)
{
  nestcl_value r = {NESTCL_DIST_UNIFORM, low, high, low, high};
  return r;
}

nestcl_value nestcl_normal_clipped(double mean, double sd, double lo, double hi)
{
  nestcl_value r = {NESTCL_DIST_NORMAL_CLIPPED, mean, sd, lo, hi};
  return r;
}

const char *nestcl_phase_name(nestcl_phase p)
{
  static const char *names[] = {"update", "deliver", "exchange", "poisson", "other"};
  return (p >= 0 && p < NESTCL_PHASES) ? names[p] : "?";
}

void nestcl_engine_config_defaults(nestcl_engine_config *c)
{
  memset(c, 0, sizeof *c);
  c->resolution_ms = 0.1;
  c->seed = 12345u;
  c->cpu_threads = 1;
  c->gpu_streams = 0;
  c->gpu_fraction = -1.0;
  c->weight_type = NESTCL_WEIGHT_FLOAT;
  c->history_capacity = 64;
  c->history_max = 4096;
  c->command_buffer = 1;
  c->kernel_sample = 64;
  c->persistent = -1;
}

int nestcl_engine_create(const nestcl_engine_config *c, nestcl_engine **out)
{
  *out = NULL;
  if (!(c->resolution_ms > 0.0) || llround(c->resolution_ms * 1000.0) < 1) {
    return nestcl_set_error(NESTCL_EINVAL, "resolution %g ms: must be a positive multiple of 0.001 ms",
                            c->resolution_ms);
  }
  if (c->cpu_threads < 0 || c->gpu_streams < 0 || c->cpu_threads + c->gpu_streams < 1) {
    return nestcl_set_error(NESTCL_EINVAL, "threads %d, streams %d: need at least one CPU thread or GPU stream",
                            c->cpu_threads, c->gpu_streams);
  }
  if (c->build_threads < 0 || c->build_threads > 1024) {
    return nestcl_set_error(NESTCL_EINVAL, "build threads %d: must be 0 (every core) to 1024", c->build_threads);
  }
  if ((int)c->build_upload < NESTCL_BUILD_UPLOAD_AUTO || (int)c->build_upload > NESTCL_BUILD_UPLOAD_COPY) {
    return nestcl_set_error(NESTCL_EINVAL, "build_upload %d: must be auto, map or copy", (int)c->build_upload);
  }
  if ((int)c->build_on < NESTCL_BUILD_ON_AUTO || (int)c->build_on > NESTCL_BUILD_ON_DEVICE) {
    return nestcl_set_error(NESTCL_EINVAL, "build_on %d: must be auto, host or device", (int)c->build_on);
  }
  if (c->cpu_threads > 256 || c->gpu_streams > 64) {
    return nestcl_set_error(NESTCL_EINVAL, "threads %d, streams %d: at most 256 threads and 64 streams", c->cpu_threads,
                            c->gpu_streams);
  }
  double alpha = c->gpu_fraction;
  if (alpha < 0.0 && alpha != -1.0) {
    return nestcl_set_error(NESTCL_EINVAL, "gpu fraction %g outside [0, 1]", alpha);
  }
  if (alpha > 1.0 || alpha != alpha) {
    return nestcl_set_error(NESTCL_EINVAL, "gpu fraction %g outside [0, 1]", alpha);
  }
  if (alpha == -1.0) {
    alpha = (double)c->gpu_streams / (double)(c->cpu_threads + c->gpu_streams);
  }
  if (alpha > 0.0 && c->gpu_streams == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "gpu fraction %g but no GPU streams", alpha);
  }
  if (alpha < 1.0 && c->cpu_threads == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "gpu fraction %g but no CPU threads for the rest", alpha);
  }
  if (c->min_delay_ms < 0.0 || c->max_delay_ms < 0.0 || (c->max_delay_ms > 0.0 && c->min_delay_ms > c->max_delay_ms)) {
    return nestcl_set_error(NESTCL_EINVAL, "min_delay %g ms / max_delay %g ms: must be positive, min <= max",
                            c->min_delay_ms, c->max_delay_ms);
  }
  if (c->min_delay_ms > 0.0 && c->min_delay_ms < c->resolution_ms) {
    return nestcl_set_error(NESTCL_EINVAL, "min_delay %g ms is below the resolution %g ms", c->min_delay_ms,
                            c->resolution_ms);
  }
  if (c->history_capacity < 1 || c->history_max < c->history_capacity || c->history_max > (1u << 24)) {
    return nestcl_set_error(NESTCL_EINVAL, "history capacity %u, maximum %u: need 1 <= capacity <= maximum <= 2^24",
                            c->history_capacity, c->history_max);
  }
  if (c->sync_interval < 0 || c->sync_interval > 1000000) {
    return nestcl_set_error(NESTCL_EINVAL, "sync interval %d super steps: need 1 to 1000000 (0: the default)",
                            c->sync_interval);
  }
  if (c->command_buffer != 0 && c->command_buffer != 1) {
    return nestcl_set_error(NESTCL_EINVAL, "command_buffer %d: must be 0 or 1", c->command_buffer);
  }
  if (c->kernel_sample < 0 || c->kernel_sample > 1000000) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "kernel_sample %d: need 1 to 1000000 (every launch to one in a million), "
                            "or 0 for no kernel timing",
                            c->kernel_sample);
  }
  if (c->persistent < -1 || c->persistent > 1) {
    return nestcl_set_error(NESTCL_EINVAL, "persistent %d: must be -1 (on GPUs), 0 (never) or 1 (where it can run)",
                            c->persistent);
  }
  if (c->plastic_tasks < -1 || c->plastic_tasks > 4096) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "plastic_tasks %d: need 1 to 4096 tasks per population (0: the default, "
                            "-1: no sharing between threads)",
                            c->plastic_tasks);
  }
  if (c->host_clock != 0 && c->host_clock != 1) {
    return nestcl_set_error(NESTCL_EINVAL, "host_clock %d: must be 0 or 1", c->host_clock);
  }
  if (c->use_mpi && !eng_mpi_built()) {
    return nestcl_set_error(NESTCL_EINVAL, "this build of nestcl has no MPI (configure with NESTCL_WITH_MPI=ON)");
  }
  nestcl_engine *e = calloc(1, sizeof *e);
  if (!e) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->desc.cfg = *c;
  e->desc.cfg.gpu_fraction = alpha;
  e->desc.cfg.device = NULL; /* the caller's string may not outlive us: copied below */
  if (c->device) {
    snprintf(e->desc.device_spec, sizeof e->desc.device_spec, "%s", c->device);
    e->desc.cfg.device = e->desc.device_spec;
  }
  e->exchange.n_ranks = 1;
  *out = e;
  return 0;
}

void nestcl_engine_destroy(nestcl_engine *e)
{
  if (!e) {
    return;
  }
  eng_free_built(e);
  for (int p = 0; p < e->desc.n_pops; ++p) {
    free(e->desc.pops[p].settings);
  }
  free(e->desc.pops);
  for (int p = 0; p < e->desc.n_projs; ++p) {
    free(e->desc.projs[p].tmpl);
    free(e->desc.projs[p].cp);
  }
  free(e->desc.projs);
  free(e->desc.drives);
  eng_recorders_free(e);
  free(e->desc.recs);
  free(e);
}

int nestcl_engine_set_models(nestcl_engine *e, const nestcl_model *const *models, int count)
{
  if (count < 0 || (count > 0 && !models)) {
    return nestcl_set_error(NESTCL_EINVAL, "model table: bad count %d", count);
  }
  e->desc.models = models;
  e->desc.n_models = count;
  return 0;
}

int nestcl_engine_set_synapse_models(nestcl_engine *e, const nestcl_synapse_model *const *models, int count)
{
  if (count < 0 || (count > 0 && !models)) {
    return nestcl_set_error(NESTCL_EINVAL, "synapse model table: bad count %d", count);
  }
  e->desc.synapse_models = models;
  e->desc.n_synapse_models = count;
  return 0;
}

static int check_description_open(const nestcl_engine *e, const char *what)
{
  if (e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "%s after the first simulate(): the network is already built", what);
  }
  return 0;
}

static int check_pop(const nestcl_engine *e, int pop)
{
  if (pop < 0 || pop >= e->desc.n_pops) {
    return nestcl_set_error(NESTCL_EINVAL, "no population %d (have %d)", pop, e->desc.n_pops);
  }
  return 0;
}

int nestcl_engine_create_population(nestcl_engine *e, const char *model, uint32_t n, uint32_t K, int *pop)
{
  int rc = check_description_open(e, "Create");
  if (rc) {
    return rc;
  }
  const nestcl_model *m = NULL;
  for (int i = 0; i < e->desc.n_models && model; ++i) {
    if (strcmp(e->desc.models[i]->name, model) == 0) {
      m = e->desc.models[i];
    }
  }
  if (!m) {
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < e->desc.n_models && used < sizeof list - 1; ++i) {
      int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", e->desc.models[i]->name);
      used += w > 0 ? (size_t)w : 0;
    }
    return nestcl_set_error(NESTCL_EINVAL, "unknown model '%s' (models in this build: %s)", model ? model : "(null)",
                            e->desc.n_models ? list : "none");
  }
  if (n == 0) {
    return nestcl_set_error(NESTCL_EINVAL, "population of %s with 0 neurons", m->name);
  }
  if (!m->set_defaults || !m->pre_run || !m->route_spike) {
    /* the update translated, a host helper did not: NEST runs those (nest_patch), the engine cannot */
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s runs on the device only under NEST: its %s did not translate (see nestcl-translate's "
                            "report), and the engine needs it",
                            m->name,
                            !m->set_defaults ? "constructors"
                              : !m->pre_run  ? "pre_run_hook"
                                             : "handle()");
  }
  if (m->event_queue) {
    /* its update() takes spikes one by one with their precise offsets (NEST's SliceRingBuffer), which only NEST's
     * glue stages (nestcl_block_stage_event); the engine's delivery sums per step */
    return nestcl_set_error(NESTCL_EINVAL,
                            "%s takes precise spike times (NEST's SliceRingBuffer): it runs on the device only under "
                            "NEST (nest_patch); the engine delivers no precise spikes",
                            m->name);
  }
  if (e->desc.n_global + n > (uint64_t)UINT32_MAX) {
    return nestcl_set_error(NESTCL_EINVAL, "more than 2^32 - 1 neurons in all");
  }
  uint32_t channels = 0;
  for (int g = 0; g < m->n_channel_groups; ++g) {
    channels += m->channels[g].count < 0 ? (m->has_receptors ? K : 0) : (uint32_t)m->channels[g].count;
  }
  if (channels > 256) {
    return nestcl_set_error(NESTCL_EINVAL, "%s with K=%u has %u ring channels; at most 256 are supported", m->name, K,
                            channels);
  }
  for (int f = 0; f < m->n_fields; ++f) {
    if (m->fields[f].array_len < 0 && (m->fields[f].array_base > 0 || m->fields[f].array_len < -1) &&
        K > NESTCL_ODE_K_MAX) {
      return nestcl_set_error(NESTCL_EINVAL, "%s with K=%u: its ODE state vector %s holds at most %d receptors",
                              m->name, K, m->fields[f].member, NESTCL_ODE_K_MAX);
    }
  }
  eng_population *np = realloc(e->desc.pops, (size_t)(e->desc.n_pops + 1) * sizeof *np);
  if (!np) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->desc.pops = np;
  eng_population *p = &e->desc.pops[e->desc.n_pops];
  memset(p, 0, sizeof *p);
  p->model = m;
  p->n = n;
  p->K = m->has_receptors ? K : 0;
  p->first = e->desc.n_global;
  p->n_channels = channels;
  p->tau_minus = 20.0; /* ArchivingNode's defaults */
  p->tau_minus_triplet = 110.0;
  e->desc.n_global += n;
  *pop = e->desc.n_pops++;
  return 0;
}

int nestcl_engine_population_range(const nestcl_engine *e, int pop, uint64_t *first_gid, uint32_t *n)
{
  int rc = check_pop(e, pop);
  if (rc) {
    return rc;
  }
  *first_gid = e->desc.pops[pop].first;
  *n = e->desc.pops[pop].n;
  return 0;
}

static int check_value(const nestcl_value *v, const char *what)
{
  if (v->kind < NESTCL_DIST_CONSTANT || v->kind > NESTCL_DIST_NORMAL_CLIPPED) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: unknown distribution %d", what, (int)v->kind);
  }
  if (!isfinite(v->a) || ((v->kind != NESTCL_DIST_CONSTANT) && !isfinite(v->b))) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: parameters must be finite", what);
  }
  if ((v->kind == NESTCL_DIST_NORMAL || v->kind == NESTCL_DIST_NORMAL_CLIPPED) && v->b < 0.0) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: negative standard deviation %g", what, v->b);
  }
  if (v->kind == NESTCL_DIST_UNIFORM && !(v->b > v->a)) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: uniform needs low < high (got %g, %g)", what, v->a, v->b);
  }
  if (v->kind == NESTCL_DIST_NORMAL_CLIPPED && (isnan(v->lo) || isnan(v->hi) || !(v->hi >= v->lo))) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: clipped normal needs lo <= hi", what);
  }
  if (v->kind == NESTCL_DIST_NORMAL_CLIPPED) {
    double lo, hi;
    eng_value_range(v, &lo, &hi);
    if (!(lo <= hi)) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: normal(%g, %g) never draws a value in [%g, %g]", what, v->a, v->b,
                              v->lo, v->hi);
    }
  }
  return 0;
}

int nestcl_engine_set(nestcl_engine *e, int pop, const char *name, nestcl_value v)
{
  int rc = check_description_open(e, "SetStatus");
  if (rc || (rc = check_pop(e, pop)) || (rc = check_value(&v, name ? name : "value"))) {
    return rc;
  }
  eng_population *p = &e->desc.pops[pop];
  if (!name || strlen(name) >= NESTCL_NAME_MAX) {
    return nestcl_set_error(NESTCL_EINVAL, "bad parameter name");
  }
  /* ArchivingNode's time constants of the spike history (per population, constant). */
  if (strcmp(name, "tau_minus") == 0 || strcmp(name, "tau_minus_triplet") == 0) {
    if (v.kind != NESTCL_DIST_CONSTANT || !(v.a > 0.0) || isinf(v.a)) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: %s must be a positive constant (got %s %g)", p->model->name, name,
                              v.kind == NESTCL_DIST_CONSTANT ? "" : "a distribution, mean", v.a);
    }
    *(strcmp(name, "tau_minus") == 0 ? &p->tau_minus : &p->tau_minus_triplet) = v.a;
    return 0;
  }
  /* Probe on a scratch neuron now, so an unknown name or a rejected value fails here, not in the build. */
  const nestcl_model *m = p->model;
  void **probe = calloc((size_t)m->n_fields, sizeof *probe);
  int ok = probe != NULL;
  for (int f = 0; ok && f < m->n_fields; ++f) {
    size_t len = nestcl_field_len(&m->fields[f], p->K ? p->K : 1);
    probe[f] = calloc(len, 8);
    ok = probe[f] != NULL;
  }
  if (ok) {
    /* The earlier settings first: checks such as V_reset < V_th depend on them. */
    m->set_defaults(probe, 1, 0, p->K);
    for (int k = 0; k < p->n_settings; ++k) {
      (void)eng_set_value(m, probe, 1, 0, p->K, p->settings[k].name, p->settings[k].v.a);
    }
    rc = eng_set_value(m, probe, 1, 0, p->K, name, v.a);
  }
  for (int f = 0; probe && f < m->n_fields; ++f) {
    free(probe[f]);
  }
  free(probe);
  if (!ok) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (rc) {
    return nestcl_set_error(NESTCL_EINVAL, "%s: cannot set '%s': %s", m->name, name, nestcl_last_error());
  }
  eng_setting *ns = realloc(p->settings, (size_t)(p->n_settings + 1) * sizeof *ns);
  if (!ns) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  p->settings = ns;
  snprintf(ns[p->n_settings].name, NESTCL_NAME_MAX, "%s", name);
  ns[p->n_settings].v = v;
  p->n_settings++;
  return 0;
}

/* A delay (constant or the bounds of its distribution) against resolution and min/max delay. */
static int check_delay(const nestcl_engine *e, const nestcl_value *d)
{
  int rc = check_value(d, "delay");
  if (rc) {
    return rc;
  }
  double h = e->desc.cfg.resolution_ms;
  double lo, hi;
  if (d->kind == NESTCL_DIST_NORMAL) {
    return nestcl_set_error(NESTCL_EINVAL,
                            "delay: an unbounded normal can draw delays below the resolution; use a clipped normal");
  }
  /* A clipped normal's drawn delays lie in its bounds and within the generator's reach of the mean. */
  eng_value_range(d, &lo, &hi);
  if (lo < 0.0) {
    return nestcl_set_error(NESTCL_EINVAL, "delay %g ms is negative", lo);
  }
  /*
   * Compared in ms (to a microsecond, NEST's tic): a delay is never rounded up
   * into range. A drawn delay is rounded to steps as NEST rounds it, so a
   * clipped normal may reach down to half a step (NEST's microcircuit clips at
   * resolution / 2): every draw above it rounds to at least one step.
   */
  double floor_ms = d->kind == NESTCL_DIST_NORMAL_CLIPPED ? 0.5 * h : h;
  if (lo < floor_ms - 5e-4) {
    return nestcl_set_error(NESTCL_EINVAL, "delay %g ms is below the resolution %g ms", lo, h);
  }
  if (e->desc.cfg.min_delay_ms > 0.0 && lo < e->desc.cfg.min_delay_ms - 5e-4) {
    return nestcl_set_error(NESTCL_EINVAL, "delay %g ms is below min_delay %g ms", lo, e->desc.cfg.min_delay_ms);
  }
  if (e->desc.cfg.max_delay_ms > 0.0 && hi > e->desc.cfg.max_delay_ms + 5e-4) {
    return nestcl_set_error(NESTCL_EINVAL, "delay %g ms is above max_delay %g ms", hi, e->desc.cfg.max_delay_ms);
  }
  if (!isfinite(hi) || eng_delay_ms_to_steps(hi, h) > 65535) {
    return nestcl_set_error(NESTCL_EINVAL, "delay %g ms exceeds 65535 steps", hi);
  }
  return 0;
}

int nestcl_engine_connect(nestcl_engine *e, int source_pop, int target_pop, const nestcl_conn_spec *conn,
                          const nestcl_syn_spec *syn)
{
  int rc = check_description_open(e, "Connect");
  if (rc || (rc = check_pop(e, source_pop)) || (rc = check_pop(e, target_pop))) {
    return rc;
  }
  if ((rc = check_value(&syn->weight, "weight")) || (rc = check_delay(e, &syn->delay_ms))) {
    return rc;
  }
  if (e->desc.n_projs >= (1 << 14)) {
    return nestcl_set_error(NESTCL_EINVAL, "more than 16384 Connect calls");
  }
  const eng_population *s = &e->desc.pops[source_pop], *t = &e->desc.pops[target_pop];
  int same = source_pop == target_pop;
  switch (conn->rule) {
  case NESTCL_RULE_FIXED_INDEGREE:
  case NESTCL_RULE_FIXED_OUTDEGREE: {
    uint32_t pool = conn->rule == NESTCL_RULE_FIXED_INDEGREE ? s->n : t->n;
    if (!conn->allow_autapses && same) {
      pool -= 1;
    }
    if (conn->degree > 0 && pool == 0) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: no partner to draw from (autapses off, one neuron)",
                              conn->rule == NESTCL_RULE_FIXED_INDEGREE ? "fixed_indegree" : "fixed_outdegree");
    }
    if (!conn->allow_multapses && conn->degree > pool) {
      return nestcl_set_error(NESTCL_EINVAL, "%s: degree %u exceeds the %u possible partners without multapses",
                              conn->rule == NESTCL_RULE_FIXED_INDEGREE ? "fixed_indegree" : "fixed_outdegree",
                              conn->degree, pool);
    }
    break;
  }
  case NESTCL_RULE_ALL_TO_ALL:
    break;
  case NESTCL_RULE_FIXED_TOTAL_NUMBER:
    if (!conn->allow_multapses) {
      /* NEST's FixedTotalNumberBuilder refuses it too. */
      return nestcl_set_error(NESTCL_EINVAL, "fixed_total_number: multapses must be allowed");
    }
    if (conn->N > 0 && !conn->allow_autapses && same && s->n < 2) {
      return nestcl_set_error(NESTCL_EINVAL, "fixed_total_number: no pair to draw (autapses off, one neuron)");
    }
    if (conn->N > ((uint64_t)1 << 40)) {
      return nestcl_set_error(NESTCL_EINVAL, "fixed_total_number: N = %llu exceeds 2^40", (unsigned long long)conn->N);
    }
    break;
  case NESTCL_RULE_PAIRWISE_BERNOULLI:
    if (!(conn->p >= 0.0 && conn->p <= 1.0)) {
      return nestcl_set_error(NESTCL_EINVAL, "pairwise_bernoulli: p = %g outside [0, 1]", conn->p);
    }
    break;
  case NESTCL_RULE_ONE_TO_ONE:
    if (s->n != t->n) {
      return nestcl_set_error(NESTCL_EINVAL, "one_to_one: populations differ in size (%u, %u)", s->n, t->n);
    }
    break;
  default:
    return nestcl_set_error(NESTCL_EINVAL, "unknown connection rule %d", (int)conn->rule);
  }
  /* The receptor must be one the model accepts (its handle() would throw otherwise). */
  int ch;
  double val;
  double w = syn->weight.kind == NESTCL_DIST_CONSTANT ? syn->weight.a : 1.0;
  ch = 0;
  if (eng_route_spike(s->model, t->model, w, syn->rport, t->K, &ch, &val) != 0) {
    return nestcl_set_error(NESTCL_EINVAL, "Connect: %s does not accept spikes from %s at rport %ld: %s",
                            t->model->name, s->model->name, syn->rport, nestcl_last_error());
  }
  if (ch < 0 || (uint32_t)ch >= t->n_channels) {
    return nestcl_set_error(NESTCL_EINVAL, "Connect: %s does not accept spikes at rport %ld", t->model->name,
                            syn->rport);
  }
  eng_projection *np = realloc(e->desc.projs, (size_t)(e->desc.n_projs + 1) * sizeof *np);
  if (!np) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->desc.projs = np;
  memset(&e->desc.projs[e->desc.n_projs], 0, sizeof e->desc.projs[e->desc.n_projs]);
  e->desc.projs[e->desc.n_projs].src = source_pop;
  e->desc.projs[e->desc.n_projs].tgt = target_pop;
  e->desc.projs[e->desc.n_projs].conn = *conn;
  e->desc.projs[e->desc.n_projs].syn = *syn;
  e->desc.n_projs++;
  return 0;
}

static int is_static_name(const char *model)
{
  return !model || strcmp(model, "static_synapse") == 0 || strcmp(model, "static_synapse_hpc") == 0;
}

/* The translated synapse model named `model` into *sm (NULL: static_synapse), refused where it cannot serve. */
static int find_synapse_model(const nestcl_engine *e, int source_pop, const char *model, const nestcl_syn_param *params,
                              int n_params, const nestcl_synapse_model **sm_out)
{
  const nestcl_synapse_model *sm = NULL;
  *sm_out = NULL;
  if (is_static_name(model)) {
    if (n_params > 0) {
      return nestcl_set_error(NESTCL_EINVAL, "static_synapse takes no parameters but weight and delay (got '%s')",
                              params[0].name ? params[0].name : "(null)");
    }
    return 0;
  }
  for (int k = 0; k < e->desc.n_synapse_models && !sm; ++k) {
    if (strcmp(e->desc.synapse_models[k]->name, model) == 0) {
      sm = e->desc.synapse_models[k];
    }
  }
  if (!sm) {
    char known[512] = "static_synapse";
    for (int k = 0; k < e->desc.n_synapse_models; ++k) {
      if (is_static_name(e->desc.synapse_models[k]->name)) {
        continue;
      }
      size_t l = strlen(known);
      snprintf(known + l, sizeof known - l, ", %s", e->desc.synapse_models[k]->name);
    }
    return nestcl_set_error(NESTCL_EINVAL, "unknown synapse model '%s' (known: %s)", model, known);
  }
  if (e->desc.pops[source_pop].model->multiplicity) {
    /* its spike of multiplicity m is m list entries: NEST's synapse would see one event */
    return nestcl_set_error(NESTCL_EINVAL,
                            "Connect: %s sends spikes of multiplicity > 1, which %s would see as that many "
                            "events (NEST's sees one); connect it with static_synapse",
                            e->desc.pops[source_pop].model->name, model);
  }
  if (!sm->set_status || !sm->send_cpu || !sm->device_source) {
    return nestcl_set_error(NESTCL_EINVAL, "synapse model '%s' was not translated completely", model);
  }
  *sm_out = sm;
  return 0;
}

/*
 * A translated synapse's projection: its layout, its template synapse and
 * common properties with the parameters and a constant weight set, its
 * target's channels and its weight bound. The caller frees pr->tmpl and pr->cp
 * on an error.
 */
static int prepare_synapse(const nestcl_engine *e, int target_pop, const nestcl_syn_spec *syn,
                           const nestcl_synapse_model *sm, const char *model, const nestcl_syn_param *params,
                           int n_params, eng_projection *pr)
{
  int rc = eng_syn_layout_init(sm, &pr->lay);
  if (rc) {
    return rc;
  }
  pr->sm = sm;
  pr->tmpl = calloc(1, sm->syn_size ? sm->syn_size : 1);
  pr->cp = calloc(1, sm->cp_size ? sm->cp_size : 1);
  if (!pr->tmpl || !pr->cp) {
    rc = nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  if (!rc) {
    sm->set_defaults(pr->tmpl, pr->cp);
  }
  for (int k = 0; k < n_params && !rc; ++k) {
    const char *name = params[k].name;
    if (!name) {
      rc = nestcl_set_error(NESTCL_EINVAL, "%s: parameter %d has no name", model, k);
    } else if (strcmp(name, "weight") == 0 || strcmp(name, "delay") == 0) {
      rc = nestcl_set_error(NESTCL_EINVAL, "%s: give '%s' in the syn spec, not as a parameter", model, name);
    } else if (sm->set_status(pr->tmpl, pr->cp, name, params[k].value) != 0) {
      rc = nestcl_set_error(NESTCL_EINVAL, "%s: cannot set '%s' = %g: %s", model, name, params[k].value,
                            nestcl_last_error());
    }
  }
  if (!rc && syn->weight.kind == NESTCL_DIST_CONSTANT && sm->set_status(pr->tmpl, pr->cp, "weight", syn->weight.a)) {
    rc = nestcl_set_error(NESTCL_EINVAL, "%s: weight %g rejected: %s", model, syn->weight.a, nestcl_last_error());
  }
  if (!rc) {
    const eng_population *tp = &e->desc.pops[target_pop];
    rc = eng_plastic_route(tp->model, tp->K, tp->n_channels, syn->rport, &pr->ch_pos, &pr->ch_neg, &pr->ch_zero);
  }
  double wmax;
  if (!rc && sm->get_status && sm->get_status(pr->tmpl, pr->cp, "Wmax", &wmax) == 0) {
    pr->max_abs = fabs(wmax);
  }
  return rc;
}

int nestcl_engine_connect_synapse(nestcl_engine *e, int source_pop, int target_pop, const nestcl_conn_spec *conn,
                                  const nestcl_syn_spec *syn, const char *model, const nestcl_syn_param *params,
                                  int n_params, int *proj)
{
  int rc = check_description_open(e, "Connect");
  if (rc || (rc = check_pop(e, source_pop)) || (rc = check_pop(e, target_pop))) {
    return rc;
  }
  if (n_params < 0 || (n_params > 0 && !params)) {
    return nestcl_set_error(NESTCL_EINVAL, "Connect: bad parameter list (%d entries)", n_params);
  }
  const nestcl_synapse_model *sm = NULL;
  rc = find_synapse_model(e, source_pop, model, params, n_params, &sm);
  if (rc) {
    return rc;
  }
  eng_projection pr;
  memset(&pr, 0, sizeof pr);
  if (sm) {
    rc = prepare_synapse(e, target_pop, syn, sm, model, params, n_params, &pr);
  }
  if (!rc) {
    rc = nestcl_engine_connect(e, source_pop, target_pop, conn, syn);
  }
  if (rc) {
    free(pr.tmpl);
    free(pr.cp);
    return rc;
  }
  eng_projection *np = &e->desc.projs[e->desc.n_projs - 1];
  np->sm = pr.sm;
  np->tmpl = pr.tmpl;
  np->cp = pr.cp;
  np->lay = pr.lay;
  np->ch_pos = pr.ch_pos;
  np->ch_neg = pr.ch_neg;
  np->ch_zero = pr.ch_zero;
  np->max_abs = pr.max_abs;
  if (proj) {
    *proj = e->desc.n_projs - 1;
  }
  return 0;
}

static int add_drive(nestcl_engine *e, const eng_drive *d)
{
  eng_drive *nd = realloc(e->desc.drives, (size_t)(e->desc.n_drives + 1) * sizeof *nd);
  if (!nd) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->desc.drives = nd;
  e->desc.drives[e->desc.n_drives++] = *d;
  return 0;
}

int nestcl_engine_add_poisson(nestcl_engine *e, int target_pop, double rate_hz, double weight, double delay_ms,
                              long rport)
{
  return nestcl_engine_add_poisson_window(e, target_pop, rate_hz, weight, delay_ms, rport, 0.0, INFINITY);
}

int nestcl_engine_add_poisson_window(nestcl_engine *e, int target_pop, double rate_hz, double weight, double delay_ms,
                                     long rport, double start_ms, double stop_ms)
{
  int rc = check_description_open(e, "Connect(poisson_generator)");
  if (rc || (rc = check_pop(e, target_pop))) {
    return rc;
  }
  nestcl_value dv = nestcl_constant(delay_ms);
  if ((rc = check_delay(e, &dv))) {
    return rc;
  }
  if (!(rate_hz >= 0.0) || !isfinite(rate_hz) || !isfinite(weight)) {
    return nestcl_set_error(NESTCL_EINVAL, "poisson_generator: rate %g Hz must be finite and >= 0", rate_hz);
  }
  int ch;
  double val;
  const eng_population *t = &e->desc.pops[target_pop];
  ch = 0;
  if (eng_route_spike(NULL, t->model, weight, rport, t->K, &ch, &val) != 0 || ch < 0 || (uint32_t)ch >= t->n_channels) {
    return nestcl_set_error(NESTCL_EINVAL, "%s does not accept spikes at rport %ld: %s", t->model->name, rport,
                            nestcl_last_error());
  }
  eng_drive d;
  memset(&d, 0, sizeof d);
  d.pop = target_pop;
  d.is_poisson = 1;
  d.rate_hz = rate_hz;
  d.weight = weight;
  d.delay_ms = delay_ms;
  d.rport = rport;
  if (!(start_ms >= 0.0) || isnan(stop_ms) || !(stop_ms >= start_ms)) {
    return nestcl_set_error(NESTCL_EINVAL, "poisson_generator: start %g ms and stop %g ms need 0 <= start <= stop",
                            start_ms, stop_ms);
  }
  d.start_ms = start_ms;
  d.stop_ms = stop_ms;
  uint32_t gen = 0;
  for (int i = 0; i < e->desc.n_drives; ++i) {
    gen += (uint32_t)e->desc.drives[i].is_poisson;
  }
  if (gen >= 256) {
    return nestcl_set_error(NESTCL_EINVAL, "at most 256 poisson_generator connections");
  }
  d.gen = gen;
  return add_drive(e, &d);
}

int nestcl_engine_add_dc(nestcl_engine *e, int target_pop, double amplitude, double delay_ms)
{
  int rc = check_description_open(e, "Connect(dc_generator)");
  if (rc || (rc = check_pop(e, target_pop))) {
    return rc;
  }
  nestcl_value dv = nestcl_constant(delay_ms);
  if ((rc = check_delay(e, &dv))) {
    return rc;
  }
  const eng_population *t = &e->desc.pops[target_pop];
  int ch;
  double val;
  if (!t->model->route_current || t->model->route_current(amplitude, 1.0, 0, t->K, &ch, &val) != 0) {
    return nestcl_set_error(NESTCL_EINVAL, "%s does not accept currents", t->model->name);
  }
  eng_drive d;
  memset(&d, 0, sizeof d);
  d.pop = target_pop;
  d.amplitude = amplitude;
  d.start_ms = 0.0;
  d.stop_ms = INFINITY;
  d.weight = 1.0;
  d.delay_ms = delay_ms;
  return add_drive(e, &d);
}

static int add_recorder(nestcl_engine *e, const eng_recorder *r, int *out)
{
  eng_recorder *nr = realloc(e->desc.recs, (size_t)(e->desc.n_recs + 1) * sizeof *nr);
  if (!nr) {
    return nestcl_set_error(NESTCL_ENOMEM, "out of host memory");
  }
  e->desc.recs = nr;
  e->desc.recs[e->desc.n_recs] = *r;
  *out = e->desc.n_recs++;
  return 0;
}

static int check_range(const nestcl_engine *e, int pop, uint32_t first, uint32_t count)
{
  int rc = check_pop(e, pop);
  if (rc) {
    return rc;
  }
  if (count == 0 || (uint64_t)first + count > e->desc.pops[pop].n) {
    return nestcl_set_error(NESTCL_EINVAL, "neurons [%u, %u) outside population %d of %u", first, first + count, pop,
                            e->desc.pops[pop].n);
  }
  return 0;
}

int nestcl_engine_add_spike_recorder(nestcl_engine *e, int pop, uint32_t first, uint32_t count, int *rec)
{
  int rc = check_description_open(e, "Connect(spike_recorder)");
  if (rc || (rc = check_range(e, pop, first, count))) {
    return rc;
  }
  eng_recorder r;
  memset(&r, 0, sizeof r);
  r.pop = pop;
  r.first = first;
  r.count = count;
  return add_recorder(e, &r, rec);
}

int nestcl_engine_add_multimeter(nestcl_engine *e, int pop, uint32_t first, uint32_t count,
                                 const char *const *recordables, int n_recordables, double interval_ms, int *rec)
{
  int rc = check_description_open(e, "Connect(multimeter)");
  if (rc || (rc = check_range(e, pop, first, count))) {
    return rc;
  }
  eng_population *p = &e->desc.pops[pop];
  const nestcl_model *m = p->model;
  if (n_recordables < 1 || n_recordables > 16) {
    return nestcl_set_error(NESTCL_EINVAL, "multimeter: 1 to 16 recordables");
  }
  int64_t iv = eng_ms_to_steps(interval_ms, e->desc.cfg.resolution_ms);
  if (iv < 1 || fabs((double)iv * e->desc.cfg.resolution_ms - interval_ms) > 1e-9) {
    return nestcl_set_error(NESTCL_EINVAL, "multimeter interval %g ms is not a positive multiple of the resolution",
                            interval_ms);
  }
  if (p->rec_interval_steps && p->rec_interval_steps != iv) {
    return nestcl_set_error(NESTCL_EINVAL, "population %d already has a multimeter with another interval", pop);
  }
  eng_recorder r;
  memset(&r, 0, sizeof r);
  r.is_multimeter = 1;
  r.pop = pop;
  r.first = first;
  r.count = count;
  r.n_rec = n_recordables;
  r.interval_steps = (int)iv;
  for (int k = 0; k < n_recordables; ++k) {
    int found = -1;
    /* NEST's recordables by name (derived ones included), then the recorded fields by NEST or member name */
    for (int j = 0; j < m->n_recordable_names && found < 0; ++j) {
      if (strcmp(m->recordable_names[j], recordables[k]) == 0) {
        found = j;
        r.rec_named[k] = 1;
      }
    }
    size_t row = 0;
    for (int j = 0; j < m->n_recordables && found < 0; ++j) {
      const nestcl_field *f = &m->fields[m->recordables[j]];
      if ((f->nest_name && strcmp(f->nest_name, recordables[k]) == 0) || strcmp(f->member, recordables[k]) == 0) {
        if (f->array_len != 0) {
          return nestcl_set_error(NESTCL_EINVAL, "multimeter: '%s' of %s is an array field (not supported)",
                                  recordables[k], m->name);
        }
        found = (int)row;
      }
      row += nestcl_field_len(f, p->K);
    }
    if (found < 0) {
      char list[512];
      size_t used = 0;
      list[0] = 0;
      for (int j = 0; j < m->n_recordable_names && used + 1 < sizeof list; ++j) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", m->recordable_names[j]);
        used += w > 0 ? (size_t)w : 0;
      }
      for (int j = 0; j < m->n_recordables && !m->n_recordable_names && used + 1 < sizeof list; ++j) {
        const nestcl_field *f = &m->fields[m->recordables[j]];
        int w =
          snprintf(list + used, sizeof list - used, "%s%s", j ? ", " : "", f->nest_name ? f->nest_name : f->member);
        used += w > 0 ? (size_t)w : 0;
      }
      return nestcl_set_error(NESTCL_EINVAL, "%s has no recordable '%s' (its recordables: %s)", m->name, recordables[k],
                              list);
    }
    r.rec_index[k] = found;
  }
  p->rec_interval_steps = (int)iv;
  return add_recorder(e, &r, rec);
}

int nestcl_engine_prepare(nestcl_engine *e)
{
  if (e->built) {
    return 0;
  }
  int rc = eng_build(e);
  if (rc) {
    eng_free_built(e);
    return rc;
  }
  e->built = 1;
  return 0;
}

int nestcl_engine_simulate(nestcl_engine *e, double t_ms)
{
  double h = e->desc.cfg.resolution_ms;
  int64_t steps = eng_ms_to_steps(t_ms, h);
  if (!(t_ms >= 0.0) || fabs((double)steps * h - t_ms) > 1e-9 * (t_ms > 1 ? t_ms : 1)) {
    return nestcl_set_error(NESTCL_EINVAL, "simulate(%g ms): not a non-negative multiple of the resolution %g ms", t_ms,
                            h);
  }
  int rc = nestcl_engine_prepare(e);
  if (rc) {
    return rc;
  }
  double t0 = eng_now();
  rc = eng_run(e, steps);
  e->stats.simulate_s += eng_now() - t0;
  return rc;
}

void nestcl_engine_set_stop_flag(nestcl_engine *e, const volatile sig_atomic_t *flag)
{
  e->clock.stop_flag = flag;
}


int nestcl_engine_estimate(nestcl_engine *e, nestcl_memory_estimate *out)
{
  return eng_estimate(e, out);
}

double nestcl_engine_time_ms(const nestcl_engine *e)
{
  return (double)(e->clock.origin + e->clock.lag) * e->desc.cfg.resolution_ms;
}

int nestcl_engine_spikes(const nestcl_engine *e, int rec, const uint64_t **gids, const int64_t **steps, size_t *n)
{
  if (rec < 0 || rec >= e->desc.n_recs || e->desc.recs[rec].is_multimeter) {
    return nestcl_set_error(NESTCL_EINVAL, "no spike recorder %d", rec);
  }
  *gids = e->desc.recs[rec].gids;
  *steps = e->desc.recs[rec].steps;
  *n = e->desc.recs[rec].n;
  return 0;
}

int nestcl_engine_samples(const nestcl_engine *e, int rec, const int64_t **steps, const uint64_t **gids,
                          const double **values, size_t *n_samples, int *n_recordables)
{
  if (rec < 0 || rec >= e->desc.n_recs || !e->desc.recs[rec].is_multimeter) {
    return nestcl_set_error(NESTCL_EINVAL, "no multimeter %d", rec);
  }
  const eng_recorder *r = &e->desc.recs[rec];
  *steps = r->s_steps;
  *gids = r->s_gids;
  *values = r->s_values;
  *n_samples = r->s_n;
  *n_recordables = r->n_rec;
  return 0;
}

int nestcl_engine_get_stats(const nestcl_engine *e, nestcl_engine_stats *out)
{
  memset(out, 0, sizeof *out);
  out->rank = e->exchange.rank;
  out->n_ranks = e->exchange.n_ranks;
  out->neurons = e->desc.n_global;
  if (!e->built) {
    return nestcl_set_error(NESTCL_EINVAL, "statistics before the network is built");
  }
  out->n_vps = e->n_vps;
  for (int v = 0; v < e->n_vps; ++v) {
    e->stats.vp_stats[v] = e->vps[v].st;
    e->stats.vp_stats[v].enqueued.profile = NULL; /* internal (engine.h) */
  }
  out->vps = e->stats.vp_stats;
  out->synapses = e->stats.synapses_total;
  out->local_synapses = e->stats.local_synapses;
  out->spikes = e->stats.spikes_total;
  out->synaptic_events = e->stats.events_total;
  out->steps = e->clock.steps_done;
  out->build_nodes_s = e->stats.build_nodes_s;
  out->build_connections_s = e->stats.build_conn_s;
  out->build_upload_s = e->stats.build_upload_s;
  out->build_draw_s = e->stats.build_draw_s;
  out->build_csr_s = e->stats.build_csr_s;
  out->build_threads = e->stats.build_threads;
  out->build_device_csrs = e->stats.build_device_csrs;
  out->build_host_csrs = e->stats.build_host_csrs;
  out->simulate_s = e->stats.simulate_s;
  out->device_loop = e->device.res.on && e->device.res.full;
  out->sync_interval = e->device.res.on && e->device.res.full ? e->device.res.plan.k : 0;
  out->command_buffer = e->device.res.graph != NULL;
  out->persistent_groups = (int)eng_resident_persist_groups(e);
  size_t syn_bytes = 0;
  for (int c = 0; c < NESTCL_MEM_CLASSES; ++c) {
    out->device_bytes[c] = e->device.dev ? nestcl_device_bytes_in_use(e->device.dev, (nestcl_mem_class)c) : 0;
    for (int v = 0; v < e->n_vps; ++v) {
      out->host_bytes[c] += e->vps[v].host_bytes[c];
    }
  }
  syn_bytes = out->device_bytes[NESTCL_MEM_SYNAPSES] + out->host_bytes[NESTCL_MEM_SYNAPSES];
  out->bytes_per_synapse = e->stats.local_synapses ? (double)syn_bytes / (double)e->stats.local_synapses : 0.0;
  if (e->device.dev) {
    const nestcl_device_info *info = nestcl_device_get_info(e->device.dev);
    out->device_name = info->device_name;
    out->device_driver = info->driver_version;
  }
  out->min_delay_steps = e->clock.min_delay;
  out->max_delay_steps = e->clock.max_delay;
  out->plastic_synapses = e->stats.plastic_synapses_total;
  uint64_t pn = 0;
  size_t pbytes = 0;
  for (int v = 0; v < e->n_vps; ++v) {
    for (int p = 0; p < e->desc.n_pops; ++p) {
      const eng_block *b = &e->vps[v].blocks[p];
      for (int j = 0; j < b->n_plastic; ++j) {
        const eng_plastic *pl = &b->plastic[j];
        const eng_syn_layout *L = &e->desc.projs[pl->proj].lay;
        pn += pl->nnz;
        pbytes += ((size_t)pl->n_rows + 1) * 8 + pl->nnz * (4 + L->state_bytes) +
          (pl->delay_hom == 0xffffffffu /* per synapse */ ? pl->nnz * 2 : 0) + (size_t)pl->n_rows * L->src_bytes;
      }
      for (int j = 0; j < b->n_plastic; ++j) {
        out->plastic_batched |= b->plastic[j].batch_cap != 0;
        out->plastic_batches += b->plastic[j].batches;
      }
      if (b->hist.cap) {
        out->history_bytes += (size_t)b->n * ((size_t)b->hist.cap * 28 + 44);
      }
    }
  }
  out->bytes_per_plastic_synapse = pn ? (double)pbytes / (double)pn : 0.0;
  return 0;
}
