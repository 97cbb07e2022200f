/*
 * The results JSON's shared sections (results.h). Keys and their order are
 * the schema's (results.schema.md); a change here changes every benchmark's
 * results, which is the point of having one writer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "results.h"
#include "run_common.h"
#include "nestcl/version.h"

#ifndef NESTCL_GIT_COMMIT
#define NESTCL_GIT_COMMIT ""
#endif

void results_begin(json *j, const char *benchmark, int argc, char **argv)
{
  json_begin_object(j);
  json_key(j, "schema");
  json_string(j, "nestcl-results/1");
  json_key(j, "benchmark");
  json_string(j, benchmark);
  json_key(j, "config");
  json_begin_object(j);
  json_key(j, "argv");
  json_begin_array(j);
  for (int k = 0; k < argc; ++k)
    json_string(j, argv[k]);
  json_end_array(j);
}

void results_config_device(json *j, const char *device_spec, const nestcl_engine_stats *s1)
{
  json_key(j, "device_spec");
  if (device_spec)
    json_string(j, device_spec);
  else
    json_null(j);
  json_key(j, "device_name");
  if (s1->device_name)
    json_string(j, s1->device_name);
  else
    json_null(j);
  json_key(j, "device_driver");
  if (s1->device_driver)
    json_string(j, s1->device_driver);
  else
    json_null(j);
}

void results_config_loop(json *j, int sync_interval, int host_clock, int command_buffer, int kernel_sample,
                         int persistent)
{
  json_key(j, "sync_interval");
  if (sync_interval)
    json_integer(j, sync_interval);
  else
    json_null(j);
  json_key(j, "host_clock");
  json_bool(j, host_clock);
  json_key(j, "command_buffer");
  json_bool(j, command_buffer);
  json_key(j, "kernel_sample");
  json_integer(j, kernel_sample);
  json_key(j, "persistent");
  json_string(j, persistent < 0 ? "auto" : persistent ? "on" : "off");
}

void results_config_end(json *j)
{
  json_key(j, "version");
  json_string(j, nestcl_version());
  json_key(j, "git_commit");
  if (*NESTCL_GIT_COMMIT)
    json_string(j, NESTCL_GIT_COMMIT);
  else
    json_null(j);
  json_end_object(j);
}

void results_build_time(json *j, const nestcl_engine_stats *s1, double wall, long peak_rss)
{
  json_key(j, "build_time_s");
  json_begin_object(j);
  json_key(j, "nodes");
  json_number(j, s1->build_nodes_s);
  json_key(j, "connections");
  json_number(j, s1->build_connections_s);
  json_key(j, "upload");
  json_number(j, s1->build_upload_s);
  json_key(j, "draw");
  json_number(j, s1->build_draw_s);
  json_key(j, "csr");
  json_number(j, s1->build_csr_s);
  json_key(j, "threads");
  json_integer(j, s1->build_threads);
  json_key(j, "drawn_on_device");
  json_integer(j, s1->build_device_csrs);
  json_key(j, "drawn_on_host");
  json_integer(j, s1->build_host_csrs);
  json_key(j, "peak_rss_bytes");
  json_integer(j, peak_rss);
  json_key(j, "total");
  json_number(j, s1->build_nodes_s + s1->build_connections_s + s1->build_upload_s);
  if (!isnan(wall)) {
    json_key(j, "wall");
    json_number(j, wall);
  }
  json_end_object(j);
}

/* Sums of the VPs' measured part, for "phases_sum_s" and the rank's "enqueued". */
typedef struct sim_totals {
  double phases[NESTCL_PHASES], wait, plastic;
  nestcl_enqueue_counts enq; /* this rank's streams, the measured part */
} sim_totals;

/* One VP's object of "vps": its measured part (after minus before), added to t. */
static void write_vp(json *j, const results_sim *r, int v, double super_steps, sim_totals *t)
{
  const nestcl_vp_stats *a = &r->s1->vps[v], *b = r->vp0 ? &r->vp0[v] : NULL;
  double ph[NESTCL_PHASES];
  for (int p = 0; p < NESTCL_PHASES; ++p) {
    ph[p] = a->seconds[p] - (b ? b->seconds[p] : 0.0);
    t->phases[p] += ph[p];
  }
  double wait = a->wait_seconds - (b ? b->wait_seconds : 0.0);
  t->wait += wait;
  double plastic = a->plastic_seconds - (b ? b->plastic_seconds : 0.0);
  t->plastic += plastic;
  json_begin_object(j);
  json_key(j, "kind");
  json_string(j, a->is_gpu ? "stream" : "thread");
  json_key(j, "neurons");
  json_integer(j, a->neurons);
  json_key(j, "synapses");
  json_integer(j, (long long)a->synapses);
  json_key(j, "phases_s");
  cli_write_phases(j, ph, wait);
  if (r->plastic_split) {
    json_key(j, "deliver_static_s");
    json_number(j, ph[NESTCL_PHASE_DELIVER] - plastic);
    json_key(j, "deliver_plastic_s");
    json_number(j, plastic);
    if (!a->is_gpu) {
      json_key(j, "plastic_tasks");
      json_integer(j, (long long)(a->plastic_tasks - (b ? b->plastic_tasks : 0)));
      json_key(j, "plastic_tasks_other");
      json_integer(j, (long long)(a->plastic_tasks_other - (b ? b->plastic_tasks_other : 0)));
      json_key(j, "deliver_plastic_cpu_s");
      json_number(j, a->plastic_cpu_seconds - (b ? b->plastic_cpu_seconds : 0.0));
    }
  }
  nestcl_enqueue_counts vq = {0};
  cli_enqueued_add(&vq, &a->enqueued, b ? &b->enqueued : &vq);
  cli_enqueued_add(&t->enq, &vq, &(nestcl_enqueue_counts){0});
  json_key(j, "enqueued");
  cli_write_enqueued(j, &vq, super_steps);
  json_end_object(j);
}

/* By total device time, the largest first (then by name, so that equal times keep one order). */
static int by_device_time(const void *pa, const void *pb)
{
  const nestcl_kernel_time *a = pa, *b = pb;
  double ta = a->profiled ? a->device_s / (double)a->profiled * (double)a->launches : 0.0;
  double tb = b->profiled ? b->device_s / (double)b->profiled * (double)b->launches : 0.0;
  return ta < tb ? 1 : ta > tb ? -1 : strcmp(a->name, b->name);
}

/*
 * "kernels": the measured part's launches per kernel name and their device
 * time from the profiling events of the sampled launches (issue 41): the mean
 * per launch, and the total that the mean gives for every launch; the idle
 * time between consecutive timed kernels of a queue.
 */
static void write_kernels(json *j, const results_sim *r)
{
  json_key(j, "kernels");
  nestcl_kernel_profile d;
  if (!r->k1 || r->k1->sample_every == 0 || nestcl_kernel_profile_diff(r->k1, r->k0, &d)) {
    json_null(j);
    return;
  }
  qsort(d.kernels, (size_t)d.n_kernels, sizeof *d.kernels, by_device_time);
  uint64_t launches = 0, profiled = 0;
  double total = 0.0;
  json_begin_object(j);
  json_key(j, "sample_every");
  json_integer(j, d.sample_every);
  json_key(j, "table");
  json_begin_array(j);
  for (int k = 0; k < d.n_kernels; ++k) {
    const nestcl_kernel_time *t = &d.kernels[k];
    double per = t->profiled ? t->device_s / (double)t->profiled : 0.0;
    launches += t->launches;
    profiled += t->profiled;
    total += per * (double)t->launches;
    json_begin_object(j);
    json_key(j, "name");
    json_string(j, t->name);
    json_key(j, "launches");
    json_integer(j, (long long)t->launches);
    json_key(j, "profiled");
    json_integer(j, (long long)t->profiled);
    json_key(j, "device_s");
    json_number(j, per * (double)t->launches);
    json_key(j, "device_us_per_launch");
    json_number(j, per * 1e6);
    json_end_object(j);
  }
  json_end_array(j);
  json_key(j, "launches");
  json_integer(j, (long long)launches);
  json_key(j, "profiled");
  json_integer(j, (long long)profiled);
  json_key(j, "device_s");
  json_number(j, total);
  json_key(j, "idle");
  json_begin_object(j);
  json_key(j, "gaps");
  json_integer(j, (long long)d.gaps);
  json_key(j, "us_per_gap");
  json_number(j, d.gaps ? d.idle_s / (double)d.gaps * 1e6 : 0.0);
  json_key(j, "measured_s");
  json_number(j, d.idle_s);
  json_end_object(j);
  json_end_object(j);
  nestcl_kernel_profile_free(&d);
}

void results_simulation(json *j, const results_sim *r)
{
  const nestcl_engine_stats *s1 = r->s1;
  json_key(j, "simulation");
  json_begin_object(j);
  json_key(j, "presim_wall_s");
  json_number(j, r->presim_wall);
  json_key(j, "sim_wall_s");
  json_number(j, r->sim_wall);
  json_key(j, "real_time_factor");
  json_number(j, r->sim_ms > 0 ? r->sim_wall / (r->sim_ms * 1e-3) : 0.0);
  json_key(j, "vps");
  json_begin_array(j);
  sim_totals t = {{0}, 0.0, 0.0, {0}};
  const double super_steps =
    s1->min_delay_steps > 0 ? (double)(s1->steps - (r->vp0 ? r->s0->steps : 0)) / s1->min_delay_steps : 0.0;
  for (int v = 0; v < s1->n_vps; ++v)
    write_vp(j, r, v, super_steps, &t);
  json_end_array(j);
  json_key(j, "enqueued");
  cli_write_enqueued(j, &t.enq, super_steps);
  json_key(j, "device_loop");
  json_bool(j, s1->device_loop);
  json_key(j, "sync_interval");
  if (s1->device_loop)
    json_integer(j, s1->sync_interval);
  else
    json_null(j);
  json_key(j, "command_buffer");
  json_bool(j, s1->command_buffer);
  json_key(j, "persistent_groups");
  json_integer(j, s1->persistent_groups);
  json_key(j, "phases_sum_s");
  cli_write_phases(j, t.phases, t.wait);
  if (r->plastic_split) {
    json_key(j, "deliver_static_s");
    json_number(j, t.phases[NESTCL_PHASE_DELIVER] - t.plastic);
    json_key(j, "deliver_plastic_s");
    json_number(j, t.plastic);
  }
  write_kernels(j, r);
  json_end_object(j);
}

void results_activity_begin(json *j, const results_activity *a, const nestcl_engine_stats *s1, double sim_ms,
                            double sim_wall)
{
  json_key(j, "activity");
  json_begin_object(j);
  json_key(j, "spikes");
  json_integer(j, (long long)a->spikes);
  json_key(j, "recorded_neurons");
  json_integer(j, (long long)a->recorded_neurons);
  json_key(j, "recorded_spikes");
  json_integer(j, (long long)a->recorded_spikes);
  json_key(j, "mean_rate_hz");
  json_number(j, a->mean_rate_hz);
  json_key(j, "network_rate_hz");
  json_number(j, sim_ms > 0 ? (double)a->spikes / (double)s1->neurons / (sim_ms * 1e-3) : 0.0);
  json_key(j, "cv_isi");
  if (!isnan(a->cv_isi))
    json_number(j, a->cv_isi);
  else
    json_null(j);
  json_key(j, "synaptic_events");
  json_integer(j, (long long)a->events);
  json_key(j, "synaptic_events_per_s");
  json_number(j, sim_wall > 0 ? (double)a->events / sim_wall : 0.0);
}

void results_memory_end(json *j, const nestcl_engine_stats *s1, int plastic)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  json_key(j, "memory");
  json_begin_object(j);
  json_key(j, "device_bytes");
  cli_write_bytes(j, s1->device_bytes);
  json_key(j, "host_vp_bytes");
  cli_write_bytes(j, s1->host_bytes);
  json_key(j, "bytes_per_synapse");
  json_number(j, s1->bytes_per_synapse);
  if (plastic) {
    json_key(j, "bytes_per_plastic_synapse");
    json_number(j, s1->bytes_per_plastic_synapse);
    json_key(j, "history_bytes");
    json_integer(j, (long long)s1->history_bytes);
  }
  json_key(j, "host_peak_rss_bytes");
  json_integer(j, (long long)ru.ru_maxrss * 1024);
  json_end_object(j);
  json_end_object(j);
}
