"""A whole Simulate in the device loop (nestcl_device_loop, nest_patch's
nestcl_device_loop.cpp) against the slice-by-slice path of the same patched
NEST (nestcl_device_loop False), network by network: NEST's spike recorders
(every event, in the order NEST's memory backend got them), local_spike_counter,
every neuron's GetStatus after each Simulate and every STDP weight must be
identical, and the kernel status must say which path ran (and why not, for a
network that must fall back). The networks, each on one stream VP that holds
every neuron (local_num_threads 1 and 3, nestcl_gpu_fraction 1), with
poisson_generators drawn on the device (nestcl_device_poisson):
  - Brunel (iaf_psc_alpha, fixed_indegree, delays 1.5 and 2.3 ms), Simulate in
    pieces that end inside a slice;
  - the hpc_benchmark network (stdp_pl_synapse_hom_hpc E->E, static
    elsewhere), with Prepare, Run twice and Cleanup;
  - a microcircuit (iaf_psc_exp populations, fixed_total_number, per-synapse
    normal delays from 0.1 ms: one-step slices);
  - a plastic network of two models (iaf_psc_alpha and iaf_psc_exp, stdp_synapse
    between them) on three threads;
the device loop of several stream VPs at once (Brunel on two, the
hpc_benchmark network on three, the plastic network on two of three
threads: their blocks one set, NEST building on every thread); and networks
that keep NEST's loop: a multimeter (on one stream VP, and on two, whose
shared set then goes back to a set per VP), a dc_generator, NEST's own
Poisson draws, neurons on a CPU thread; and two that keep it after the device's
rows were made loop ids or were refused them (a spike_generator), whose spikes
must equal those with nestcl_device_loop False and with NEST alone: each
source's connections in two static synapse models (one row, delivered once),
and connections not sorted by source (use_compressed_spikes False: a source
has several runs). Prints each run's path, spikes and
device waits per slice. Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

H = 0.1


def kernel(threads=1, seed=4321, **keys):
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": threads, "nestcl_streams": 1, "rng_seed": seed, "resolution": H,
                          "nestcl_device_poisson": True})
    if threads > 1:
        nest.SetKernelStatus({"nestcl_gpu_fraction": 1.0})
    nest.SetKernelStatus(keys)


def brunel():
    p = {"E_L": 0.0, "V_th": 20.0, "V_reset": 10.0, "t_ref": 2.0, "C_m": 250.0, "tau_m": 20.0,
         "tau_syn_ex": 0.5, "tau_syn_in": 0.5, "V_m": 0.0}
    ex = nest.Create("iaf_psc_alpha", 400, params=p)
    inh = nest.Create("iaf_psc_alpha", 100, params=p)
    allp = ex + inh
    allp.V_m = nest.random.uniform(0.0, 20.0)
    noise = nest.Create("poisson_generator", params={"rate": 9000.0})
    sr = nest.Create("spike_recorder")
    nest.Connect(ex, allp, {"rule": "fixed_indegree", "indegree": 40}, {"weight": 32.0, "delay": 1.5})
    nest.Connect(inh, allp, {"rule": "fixed_indegree", "indegree": 10}, {"weight": -192.0, "delay": 2.3})
    nest.Connect(noise, allp, syn_spec={"weight": 32.0, "delay": 1.5})
    nest.Connect(allp, sr)
    return allp, [sr], None


def hpc():
    p = {"E_L": 0.0, "C_m": 250.0, "tau_m": 10.0, "t_ref": 0.5, "V_th": 20.0, "V_reset": 0.0, "tau_syn_ex": 0.33,
         "tau_syn_in": 0.33, "tau_minus": 30.0, "V_m": 5.7}
    ex = nest.Create("iaf_psc_alpha", 400, params=p)
    inh = nest.Create("iaf_psc_alpha", 100, params=p)
    allp = ex + inh
    allp.V_m = nest.random.normal(5.7, 7.2)
    noise = nest.Create("poisson_generator", params={"rate": 18000.0})
    sr = nest.Create("spike_recorder")
    nest.SetDefaults("static_synapse_hpc", {"delay": 1.5})
    nest.CopyModel("static_synapse_hpc", "syn_ex", {"weight": 45.6})
    nest.CopyModel("static_synapse_hpc", "syn_in", {"weight": -228.0})
    nest.SetDefaults("stdp_pl_synapse_hom_hpc", {"delay": 1.5, "alpha": 0.0513, "lambda": 0.1, "mu": 0.4,
                                                  "tau_plus": 15.0})
    nest.Connect(noise, allp, "all_to_all", {"synapse_model": "syn_ex"})
    nest.Connect(ex, ex, {"rule": "fixed_indegree", "indegree": 40},
                 {"synapse_model": "stdp_pl_synapse_hom_hpc", "weight": 45.6})
    nest.Connect(inh, ex, {"rule": "fixed_indegree", "indegree": 10}, {"synapse_model": "syn_in"})
    nest.Connect(ex, inh, {"rule": "fixed_indegree", "indegree": 40}, {"synapse_model": "syn_ex"})
    nest.Connect(inh, inh, {"rule": "fixed_indegree", "indegree": 10}, {"synapse_model": "syn_in"})
    nest.Connect(ex[:100], sr, "all_to_all", "static_synapse_hpc")
    return allp, [sr], (ex, ex, "stdp_pl_synapse_hom_hpc")


def microcircuit():
    sizes = [200, 60, 220, 50]
    p = {"tau_m": 10.0, "C_m": 250.0, "E_L": -65.0, "V_th": -50.0, "V_reset": -65.0, "t_ref": 2.0,
         "tau_syn_ex": 0.5, "tau_syn_in": 0.5, "I_e": 0.0}
    pops = [nest.Create("iaf_psc_exp", n, params=p) for n in sizes]
    srs = []
    for k, pop in enumerate(pops):
        pop.V_m = nest.random.normal(-58.0, 10.0)
        gen = nest.Create("poisson_generator", params={"rate": 8.0 * 1600})
        nest.Connect(gen, pop, syn_spec={"weight": 87.8, "delay": 1.5})
        sr = nest.Create("spike_recorder")
        nest.Connect(pop, sr)
        srs.append(sr)
    for a, src in enumerate(pops):
        for b, tgt in enumerate(pops):
            w = 87.8 if a % 2 == 0 else -351.2
            d = nest.math.redraw(nest.random.normal(1.5 if a % 2 == 0 else 0.75, 0.5 if a % 2 == 0 else 0.375),
                                 min=H, max=20.0)
            nest.Connect(src, tgt, {"rule": "fixed_total_number", "N": sizes[a] * sizes[b] // 25},
                         {"weight": nest.math.redraw(nest.random.normal(w, abs(w) * 0.1), min=-1e4 if w < 0 else 0.0,
                                                      max=0.0 if w < 0 else 1e4), "delay": d})
    allp = pops[0] + pops[1] + pops[2] + pops[3]
    return allp, srs, None


def plastic():
    a = nest.Create("iaf_psc_alpha", 150, params={"I_e": 300.0, "tau_minus": 20.0})
    b = nest.Create("iaf_psc_exp", 100, params={"I_e": 250.0})
    noise = nest.Create("poisson_generator", params={"rate": 5000.0})
    sr = nest.Create("spike_recorder")
    nest.Connect(noise, a + b, syn_spec={"weight": 20.0, "delay": 1.0})
    nest.Connect(b, a, {"rule": "fixed_indegree", "indegree": 20},
                 {"synapse_model": "stdp_synapse", "weight": 40.0, "delay": 1.0, "Wmax": 100.0, "lambda": 0.05})
    nest.Connect(a, b, {"rule": "fixed_indegree", "indegree": 15}, {"weight": -30.0, "delay": 1.2})
    nest.Connect(a + b, sr)
    return a + b, [sr], (b, a, "stdp_synapse")


# Each network: builder, threads, the Simulate calls (ms; "run" for Prepare/Run/Run/Cleanup).
CASES = [("brunel", brunel, 1, [100.3, 60.0, 39.7], {}),
         ("hpc_benchmark", hpc, 1, "run", {}),
         ("microcircuit", microcircuit, 3, [80.0, 20.1], {}),
         ("plastic, two models", plastic, 3, [120.0, 30.0], {}),
         # every stream VP of the device in one loop (their blocks one set): NEST builds on all its threads
         ("brunel on two stream VPs", brunel, 2, [100.3, 60.0, 39.7], {"nestcl_streams": 2}),
         ("hpc_benchmark on three stream VPs", hpc, 3, "run", {"nestcl_streams": 3}),
         ("plastic, two models, on two of three", plastic, 3, [120.0, 30.0], {"nestcl_streams": 2})]


def state(neurons):
    """Every float of every neuron's status, as one array (parameters and state)."""
    st = neurons.get()
    if isinstance(st, dict):  # one neuron
        st = {k: [v] for k, v in st.items()}
    keys = sorted(k for k, v in st.items() if all(isinstance(x, float) for x in v))
    return np.array([st[k] for k in keys], dtype=float)


def simulate(builder, threads, calls, loop, keys):
    kernel(threads, nestcl_device_loop=loop, **keys)
    neurons, srs, syn = builder()
    states = []
    if calls == "run":
        nest.Prepare()
        nest.Run(45.0)
        nest.Run(31.5)
        nest.Cleanup()
        states.append(state(neurons))
    else:
        for t in calls:
            nest.Simulate(t)
            states.append(state(neurons))
    ks = nest.GetKernelStatus()
    events = [(np.asarray(sr.get("events", "senders")), np.asarray(sr.get("events", "times"))) for sr in srs]
    weights = None
    if syn:
        conns = nest.GetConnections(syn[0], syn[1], synapse_model=syn[2])
        weights = np.asarray(conns.get("weight"))
        # by source and target (NEST hands out several threads' connections in no fixed order)
        weights = weights[np.lexsort((weights, np.asarray(conns.get("target")), np.asarray(conns.get("source"))))]
    return events, states, weights, ks


def same(x, y):
    return all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(x, y))


def check_case(name, builder, threads, calls, keys, failures):
    ev_s, st_s, w_s, ks_s = simulate(builder, threads, calls, False, keys)
    ev_l, st_l, w_l, ks_l = simulate(builder, threads, calls, True, keys)
    n_sp = sum(e[0].size for e in ev_l)
    waits = ks_l["nestcl_waits"] / max(1, ks_l["nestcl_slices"])
    print("%s: %s (%s) against %s; %d spikes recorded; %.3f waits per slice (%.3f slice by slice); "
          "%d launches per slice" % (name, ks_l["nestcl_simulate_path"], ks_l["nestcl_simulate_path_reason"] or "-",
                                     ks_s["nestcl_simulate_path"], n_sp, waits,
                                     ks_s["nestcl_waits"] / max(1, ks_s["nestcl_slices"]),
                                     ks_l["nestcl_launches"] // max(1, ks_l["nestcl_slices"])))
    if ks_l["nestcl_simulate_path"] != "device loop":
        failures.append("%s: ran %s: %s" % (name, ks_l["nestcl_simulate_path"], ks_l["nestcl_simulate_path_reason"]))
    if ks_s["nestcl_simulate_path"] != "slice by slice" or "nestcl_device_loop is False" not in \
            ks_s["nestcl_simulate_path_reason"]:
        failures.append("%s: with nestcl_device_loop False the path was %r (%r)"
                        % (name, ks_s["nestcl_simulate_path"], ks_s["nestcl_simulate_path_reason"]))
    if n_sp < 100:
        failures.append("%s: only %d spikes: nothing worth comparing" % (name, n_sp))
    if not same(ev_l, ev_s):
        failures.append("%s: the spike recorders' events differ" % name)
    if ks_l["local_spike_counter"] != ks_s["local_spike_counter"]:
        failures.append("%s: local_spike_counter %d against %d" % (name, ks_l["local_spike_counter"],
                                                                  ks_s["local_spike_counter"]))
    for k, (a, b) in enumerate(zip(st_l, st_s)):
        if not np.array_equal(a, b, equal_nan=True):
            failures.append("%s: the neurons' status after Simulate %d differs" % (name, k + 1))
    if w_l is not None and not (np.array_equal(w_l, w_s) and np.any(w_l != w_l[0])):
        failures.append("%s: STDP weights differ (or did not change)" % name)
    if waits > 0.2:
        failures.append("%s: %.2f waits per slice in the device loop" % (name, waits))


def two_models():
    """Neurons driven by I_e whose sources each have connections of two static models, and a spike_generator
    (which keeps NEST's loop)."""
    p = {"E_L": 0.0, "V_th": 20.0, "V_reset": 10.0, "t_ref": 2.0, "C_m": 250.0, "tau_m": 20.0, "I_e": 300.0}
    allp = nest.Create("iaf_psc_alpha", 300, params=p)
    allp.V_m = nest.random.uniform(0.0, 20.0)
    sr = nest.Create("spike_recorder")
    nest.CopyModel("static_synapse", "static_again", {"weight": -40.0, "delay": 2.3})
    nest.Connect(allp, allp, {"rule": "fixed_indegree", "indegree": 20}, {"weight": 12.0, "delay": 1.5})
    nest.Connect(allp, allp, {"rule": "fixed_indegree", "indegree": 10}, {"synapse_model": "static_again"})
    nest.Connect(nest.Create("spike_generator", params={"spike_times": [3.0, 7.5]}), allp[:20],
                 syn_spec={"weight": 500.0})
    nest.Connect(allp, sr)
    return allp, [sr], None


def after_rows(name, why, failures, **keys):
    """The slice path after the rows were chosen: equal to nestcl_device_loop False and to NEST alone."""
    runs = []
    for k in ({"nestcl_device_loop": True}, {"nestcl_device_loop": False}, {"nestcl_streams": 0}):
        kernel(1, **keys, **k)
        neurons, srs, _ = two_models()
        nest.Simulate(60.0)
        ks = nest.GetKernelStatus()
        runs.append(([(np.asarray(sr.get("events", "senders")), np.asarray(sr.get("events", "times")))
                      for sr in srs], state(neurons), ks))
    (ev, st, ks), n_sp = runs[0], runs[0][0][0][0].size
    print("%s: %s (%s); %d spikes recorded" % (name, ks["nestcl_simulate_path"], ks["nestcl_simulate_path_reason"],
                                               n_sp))
    if ks["nestcl_simulate_path"] != "slice by slice" or why not in ks["nestcl_simulate_path_reason"]:
        failures.append("%s: path %r, reason %r (expected slice by slice, %r)"
                        % (name, ks["nestcl_simulate_path"], ks["nestcl_simulate_path_reason"], why))
    if n_sp < 100:
        failures.append("%s: only %d spikes: nothing worth comparing" % (name, n_sp))
    if not same(ev, runs[1][0]) or not np.array_equal(st, runs[1][1], equal_nan=True):
        failures.append("%s: spikes or status differ from nestcl_device_loop False" % name)
    if sorted(zip(*map(list, ev[0]))) != sorted(zip(*map(list, runs[2][0][0]))):
        failures.append("%s: spikes differ from NEST alone" % name)


def fallback(name, extra, why, failures, threads=1, **keys):
    kernel(threads, **keys)
    neurons, srs, _ = brunel()
    extra(neurons)
    nest.Simulate(20.0)
    ks = nest.GetKernelStatus()
    print("%s: %s (%s)" % (name, ks["nestcl_simulate_path"], ks["nestcl_simulate_path_reason"]))
    if ks["nestcl_simulate_path"] != "slice by slice" or why not in ks["nestcl_simulate_path_reason"]:
        failures.append("%s: path %r, reason %r (expected slice by slice, %r)"
                        % (name, ks["nestcl_simulate_path"], ks["nestcl_simulate_path_reason"], why))


def main():
    nest.verbosity = nest.VerbosityLevel.WARNING
    failures = []
    for name, builder, threads, calls, keys in CASES:
        check_case(name, builder, threads, calls, keys, failures)

    def multimeter(n):
        mm = nest.Create("multimeter", params={"record_from": ["V_m"]})
        nest.Connect(mm, n[:5])

    def dc(n):
        nest.Connect(nest.Create("dc_generator", params={"amplitude": 10.0}), n[:5])

    fallback("a multimeter", multimeter, "multimeter", failures)
    fallback("a dc_generator", dc, "dc_generator", failures)
    fallback("NEST's Poisson draws", lambda n: None, "nestcl_device_poisson is False", failures,
             nestcl_device_poisson=False)
    fallback("neurons on a CPU thread", lambda n: None, "CPU thread", failures, threads=2, nestcl_streams=1,
             nestcl_gpu_fraction=0.5)
    fallback("two stream VPs and a multimeter", multimeter, "multimeter", failures, threads=2, nestcl_streams=2)
    after_rows("two static models per source", "spike_generator", failures)
    after_rows("connections not sorted by source", "several runs", failures, use_compressed_spikes=False)
    for f in failures:
        print("FAIL " + f)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
