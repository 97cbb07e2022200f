"""The network stays on the device between Simulate calls (nest_patch's
nestcl_resident.cpp): every scenario below runs on a stream VP, on the device
loop's path and slice by slice, and must give what NEST alone gives
(nestcl_streams 0) at the same thread count: every spike of every spike
recorder, every multimeter sample, every neuron's status after each step and
every weight read between the calls.

  - static: iaf_psc_alpha driven by I_e (so NEST alone and the device loop
    see the same input, and weights that fixed point sums exactly), two static
    synapse models per source;
  - plastic: stdp_synapse between iaf_psc_delta neurons whose spikes
    spike_generators force (as test_stdp_streams: the weights then depend on
    spike times alone and must be equal bit for bit; the membrane potentials,
    which sum the plastic weights in fixed point on the device, within 1e-9 mV);
  - plastic, device loop: hpc_benchmark's kind of network (stdp_pl_synapse_hom
    E->E) with poisson_generators drawn on the device, whose device loop is
    held to the stream VP's slice path (NEST alone draws other Poisson input).

The steps: one Simulate(T) against K calls of T / K; a chunked loop that
between calls reads the neurons' status and the weights, changes a neuron
parameter, changes connections' weights, adds neurons and connections (and,
for the plastic network, a new source with its own STDP synapses);
Prepare / Run x K / Cleanup with a parameter changed between two Runs; each
run follows a ResetKernel in the same process (a network built again after
one that stayed on the device). It
also checks what travelled (nestcl_resident): calls without changes build
nothing again, send nothing and read nothing back; a read brings one block
back; a SetStatus sends one block or one synapse model, in place; new
neurons build the thread again, saying why; and nestcl_device_bytes stays
above 0 between calls. Prints a line per scenario. Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

H = 0.1


def kernel(streams, loop=True, threads=1):
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": threads, "resolution": H, "rng_seed": 2718})
    if streams:
        nest.SetKernelStatus({"nestcl_streams": streams, "nestcl_device_loop": loop, "nestcl_device_min_work": 0})
        if threads > streams:
            nest.SetKernelStatus({"nestcl_gpu_fraction": 1.0})


def static_net():
    p = {"E_L": 0.0, "V_th": 20.0, "V_reset": 10.0, "t_ref": 2.0, "C_m": 250.0, "tau_m": 20.0, "I_e": 300.0}
    n = nest.Create("iaf_psc_alpha", 300, params=p)
    n.V_m = nest.random.uniform(0.0, 20.0)
    sr = nest.Create("spike_recorder")
    nest.CopyModel("static_synapse", "static_again", {"weight": -40.0, "delay": 2.3})
    nest.Connect(n, n, {"rule": "fixed_indegree", "indegree": 20}, {"weight": 12.0, "delay": 1.5})
    nest.Connect(n, n, {"rule": "fixed_indegree", "indegree": 10}, {"synapse_model": "static_again"})
    nest.Connect(n, sr)
    return {"neurons": n, "recorders": [sr], "plastic": None}


def static_changes(net, step):
    n = net["neurons"]
    if step == 0:
        n[5:25].I_e = 340.0  # a parameter of some neurons
    elif step == 1:
        nest.GetConnections(n[:10], n, synapse_model="static_synapse").set(weight=20.0)
    elif step == 2:
        m = nest.Create("iaf_psc_alpha", 40, params={"I_e": 320.0, "E_L": 0.0, "V_th": 20.0, "V_reset": 10.0})
        nest.Connect(m, n, {"rule": "fixed_indegree", "indegree": 2}, {"weight": 12.0, "delay": 1.5})
        nest.Connect(n[:50], m, {"rule": "fixed_indegree", "indegree": 5}, {"weight": 8.0, "delay": 1.0})
        nest.Connect(m, net["recorders"][0])
        net["neurons"] = n + m


PLASTIC = {"lambda": 0.05, "alpha": 1.1, "mu_plus": 0.5, "mu_minus": 0.7, "Wmax": 0.2, "tau_plus": 15.0}


def forced(cells, seed, t_end=2000.0):
    """Each cell fires when its spike_generator says (100 mV into an iaf_psc_delta)."""
    rng = np.random.default_rng(seed)
    for c in cells:
        times = np.unique(np.round(np.sort(rng.uniform(1.0, t_end, 60)), 1))
        g = nest.Create("spike_generator", params={"spike_times": times.tolist()})
        nest.Connect(g, c, syn_spec={"weight": 100.0, "delay": 1.0})


def plastic_net():
    pre = nest.Create("iaf_psc_delta", 20, params={"t_ref": 2.0})
    post = nest.Create("iaf_psc_delta", 20, params={"t_ref": 2.0, "tau_minus": 20.0})
    forced(pre, 1)
    forced(post, 2)
    sr = nest.Create("spike_recorder")
    mm = nest.Create("multimeter", params={"record_from": ["V_m"], "interval": 0.5})
    nest.Connect(pre, post, "all_to_all", dict(PLASTIC, synapse_model="stdp_synapse", weight=0.05, delay=1.5))
    nest.Connect(pre + post, sr)
    nest.Connect(mm, post[:5])
    return {"neurons": pre + post, "recorders": [sr, mm], "plastic": (pre, post), "post": post}


def plastic_changes(net, step):
    pre, post = net["plastic"]
    if step == 0:
        post[3:8].t_ref = 3.0
    elif step == 1:
        nest.GetConnections(pre[:4], post, synapse_model="stdp_synapse").set(weight=0.1)
    elif step == 2:
        new = nest.Create("iaf_psc_delta", 3, params={"t_ref": 2.0})
        forced(new, 3)
        nest.Connect(new, post, "all_to_all", dict(PLASTIC, synapse_model="stdp_synapse", weight=0.07, delay=1.5))
        nest.Connect(new, net["recorders"][0])
        net["plastic"] = (pre + new, post)
        net["neurons"] = net["neurons"] + new


def loop_net():
    """hpc_benchmark's kind of network with poisson_generators drawn on the device: the device loop runs it, STDP
    included; NEST alone draws its Poisson input otherwise, so this one is held to the slice path instead."""
    nest.SetKernelStatus({"nestcl_device_poisson": True})
    p = {"E_L": 0.0, "C_m": 250.0, "tau_m": 10.0, "t_ref": 0.5, "V_th": 20.0, "V_reset": 0.0, "tau_syn_ex": 0.33,
         "tau_syn_in": 0.33, "tau_minus": 30.0}
    ex = nest.Create("iaf_psc_alpha", 320, params=p)
    inh = nest.Create("iaf_psc_alpha", 80, params=p)
    (ex + inh).V_m = nest.random.normal(5.7, 7.2)
    noise = nest.Create("poisson_generator", params={"rate": 18000.0})
    sr = nest.Create("spike_recorder")
    nest.Connect(noise, ex + inh, syn_spec={"weight": 45.6, "delay": 1.5})
    nest.Connect(ex, ex, {"rule": "fixed_indegree", "indegree": 32},
                 {"synapse_model": "stdp_pl_synapse_hom", "weight": 45.6, "delay": 1.5})
    nest.Connect(ex, inh, {"rule": "fixed_indegree", "indegree": 32}, {"weight": 45.6, "delay": 1.5})
    nest.Connect(inh, ex + inh, {"rule": "fixed_indegree", "indegree": 8}, {"weight": -228.0, "delay": 1.5})
    nest.Connect(ex + inh, sr)
    return {"neurons": ex + inh, "recorders": [sr], "plastic": (ex, ex), "model": "stdp_pl_synapse_hom"}


def loop_changes(net, step):
    ex = net["plastic"][0]
    if step == 0:
        ex[:40].I_e = 30.0
    elif step == 1:
        nest.GetConnections(ex[:20], ex, synapse_model="stdp_pl_synapse_hom").set(weight=40.0)
    elif step == 2:
        new = nest.Create("iaf_psc_alpha", 20, params={"tau_minus": 30.0, "V_th": 20.0, "E_L": 0.0})
        nest.Connect(new, ex, {"rule": "fixed_indegree", "indegree": 1},
                     {"synapse_model": "stdp_pl_synapse_hom", "weight": 45.6, "delay": 1.5})
        nest.Connect(ex[:100], new, {"rule": "fixed_indegree", "indegree": 20}, {"weight": 45.6, "delay": 1.5})
        nest.Connect(new, net["recorders"][0])
        net["plastic"] = (ex + new, ex)
        net["neurons"] = net["neurons"] + new


NETS = {"static": (static_net, static_changes), "plastic": (plastic_net, plastic_changes),
        "plastic, device loop": (loop_net, loop_changes)}


def status(neurons):
    """Every float of every neuron's status, as one array (parameters and state), but post_trace: NEST's
    ArchivingNode keeps there what its last get_K_value computed for a synapse's send(), which on a stream VP
    runs on the device (docs/using-with-nest.md, "STDP on stream VPs")."""
    st = neurons.get()
    keys = sorted(k for k, v in st.items() if k != "post_trace" and all(isinstance(x, float) for x in v))
    return np.array([st[k] for k in keys], dtype=float)


def weights(net):
    if not net["plastic"]:
        return np.asarray(nest.GetConnections(net["neurons"][:30], net["neurons"]).get("weight"), dtype=float)
    pre, post = net["plastic"]
    c = nest.GetConnections(pre, post, synapse_model=net.get("model", "stdp_synapse"))
    order = np.lexsort((np.asarray(c.get("target")), np.asarray(c.get("source"))))
    return np.asarray(c.get("weight"), dtype=float)[order]


def recorded(net):
    out = []
    for r in net["recorders"]:
        ev = r.get("events")
        keys = ["senders", "times"] + (["V_m"] if "V_m" in ev else [])
        rows = np.array([np.asarray(ev[k], dtype=float) for k in keys])
        out.append(rows[:, np.lexsort(rows[::-1])] if rows.size else rows)
    return out


def run(name, scenario, streams, loop):
    """The scenario's observations, in order: (what, array) pairs."""
    build, changes = NETS[name]
    kernel(streams, loop)
    net = build()
    obs = []
    if scenario == "one call":
        nest.Simulate(120.0)
    elif scenario == "K calls":
        for _ in range(8):
            nest.Simulate(15.0)
    elif scenario == "chunked loop":
        for step in range(4):
            nest.Simulate(30.0)
            obs.append(("status after call %d" % (step + 1), status(net["neurons"])))
            obs.append(("weights after call %d" % (step + 1), weights(net)))
            changes(net, step)
    elif scenario == "prepare run cleanup":
        nest.Prepare()
        nest.Run(30.0)
        nest.Run(22.5)
        net["neurons"][:10].set({"I_e": 200.0} if name == "static" else {"t_ref": 2.5})
        nest.Run(47.5)
        nest.Run(60.0)
        nest.Cleanup()
    obs.append(("status at the end", status(net["neurons"])))
    obs.append(("weights at the end", weights(net)))
    for k, r in enumerate(recorded(net)):
        obs.append(("recorder %d" % k, r))
    return obs, nest.GetKernelStatus()


def compare(label, name, ref, got, failures, status_tol=0.0):
    for (what, a), (_, b) in zip(ref, got):
        if a.shape != b.shape:
            failures.append("%s: %s: shape %s against %s" % (label, what, b.shape, a.shape))
            continue
        # The plastic network's membrane potentials sum plastic weights in fixed point on the device.
        tol = 1e-9 if name == "plastic" and (what.startswith("status") or what == "recorder 1") else 0.0
        tol = max(tol, status_tol if what.startswith("status") else 0.0)
        if not np.allclose(a, b, rtol=0.0, atol=tol, equal_nan=True) if tol else not np.array_equal(a, b,
                                                                                                 equal_nan=True):
            failures.append("%s: %s differs (largest difference %g)"
                            % (label, what, float(np.nanmax(np.abs(a - b))) if a.size else 0.0))
    if len(ref) != len(got):
        failures.append("%s: %d observations against %d" % (label, len(got), len(ref)))


def spikes_of(obs):
    return sum(a.shape[1] for what, a in obs if what == "recorder 0" and a.size)


def check_equal(failures):
    one = {}  # (net, path): the one call's observations, which K calls of T / K must repeat
    for name in NETS:
        for scenario in ("one call", "K calls", "chunked loop", "prepare run cleanup"):
            # NEST alone, or for the device-drawn Poisson input the stream VP slice by slice (as test_device_loop)
            ref, _ = run(name, scenario, 0, True) if name != "plastic, device loop" else run(name, scenario, 1, False)
            for loop in (True, False) if name != "plastic, device loop" else (True,):
                got, ks = run(name, scenario, 1, loop)
                label = "%s, %s, %s" % (name, scenario, ks["nestcl_simulate_path"])
                print("%s: %d spikes; rebuilt %s" % (label, spikes_of(got), ks["nestcl_resident"]["rebuilt"] or "-"))
                if spikes_of(got) < 100:
                    failures.append("%s: only %d spikes, nothing worth comparing" % (label, spikes_of(got)))
                compare(label, name, ref, got, failures)
                if scenario == "one call":
                    one[(name, loop)] = got
                elif scenario == "K calls":
                    # Spikes and weights as one call's; the status too, but for the calcium of NEST's structural
                    # plasticity, which each Run's end decays in another number of steps (as NEST alone does)
                    compare(label + " against one call", name, one[(name, loop)], got, failures, status_tol=1e-15)
                if loop and name != "plastic" and ks["nestcl_simulate_path"] != "device loop":
                    failures.append("%s: the device loop did not run: %s" % (label, ks["nestcl_simulate_path_reason"]))


def traffic(failures):
    """What travels: nothing between calls without changes; a read one block; a write one block in place."""
    kernel(1, True)
    net = static_net()
    nest.Simulate(10.0)
    r0 = nest.GetKernelStatus("nestcl_resident")
    t0 = nest.GetKernelStatus("nestcl_time_prepare")
    for _ in range(20):
        nest.Simulate(1.0)
    r1 = nest.GetKernelStatus("nestcl_resident")
    per_call = (nest.GetKernelStatus("nestcl_time_prepare") - t0) / 20
    print("traffic: 20 calls without changes: %s; %.6f s of prepare per call; %d device bytes"
          % ({k: r1[k] - r0[k] for k in r1 if k != "rebuilt"}, per_call, nest.nestcl_device_bytes))
    for k in ("threads_built", "blocks_sent", "blocks_read", "synapse_models_sent", "synapse_models_read"):
        if r1[k] != r0[k]:
            failures.append("traffic: %s went from %d to %d in calls without changes" % (k, r0[k], r1[k]))
    if nest.nestcl_device_bytes <= 0:
        failures.append("traffic: nestcl_device_bytes is %d between calls" % nest.nestcl_device_bytes)
    net["neurons"][3].get("V_m")
    net["neurons"][4:9].get("V_m")
    r2 = nest.GetKernelStatus("nestcl_resident")
    if r2["blocks_read"] - r1["blocks_read"] != 1:
        failures.append("traffic: two reads of one block read %d blocks back" % (r2["blocks_read"] - r1["blocks_read"]))
    net["neurons"][7].set(I_e=350.0)
    nest.Simulate(1.0)
    r3 = nest.GetKernelStatus("nestcl_resident")
    if r3["blocks_sent"] - r2["blocks_sent"] != 1 or r3["threads_built"] != r2["threads_built"]:
        failures.append("traffic: a SetStatus sent %d blocks and built %d threads"
                        % (r3["blocks_sent"] - r2["blocks_sent"], r3["threads_built"] - r2["threads_built"]))
    nest.Create("iaf_psc_alpha", 5)
    nest.Simulate(1.0)
    r4 = nest.GetKernelStatus("nestcl_resident")
    if r4["threads_built"] - r3["threads_built"] != 1 or not any("new iaf_psc_alpha" in w for w in r4["rebuilt"]):
        failures.append("traffic: new neurons built %d threads (%s)" % (r4["threads_built"] - r3["threads_built"],
                                                                       r4["rebuilt"]))
    kernel(1, False)
    net = plastic_net()
    nest.Simulate(10.0)
    c = nest.GetConnections(net["plastic"][0][:2], net["plastic"][1], synapse_model="stdp_synapse")
    before = nest.GetKernelStatus("nestcl_resident")
    c.get("weight")
    c.set(weight=0.11)
    nest.Simulate(5.0)
    after = nest.GetKernelStatus("nestcl_resident")
    if after["synapse_models_read"] - before["synapse_models_read"] != 1 or \
            after["synapse_models_sent"] - before["synapse_models_sent"] != 1 or \
            after["threads_built"] != before["threads_built"]:
        failures.append("traffic: a weight read and set travelled %s" % {k: after[k] - before[k] for k in after
                                                                            if k != "rebuilt"})


def main():
    nest.verbosity = nest.VerbosityLevel.WARNING
    failures = []
    traffic(failures)
    check_equal(failures)  # every run after the first follows a ResetKernel in this process
    for f in failures:
        print("FAIL " + f)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
