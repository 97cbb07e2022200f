"""Single neurons on a stream VP against the same neuron on a CPU VP (PyNEST, patched NEST).

local_num_threads 2, nestcl_streams 1: NEST places node ids round robin, so of
two neurons one lives on the stream VP (updated on the OpenCL device through
nestcl) and the other on NEST's CPU thread. Both get the same spike_generator
train (weights that are multiples of 2**-16, exact in nestcl's fixed point)
and the same dc_generator, through two Simulate calls (state carries over and
GetStatus sees it in between). Every recordable of the multimeter and every
spike time must be equal bit for bit, each neuron must fire, and the device
must have done the work (nestcl_time_update > 0).

gif_psc_exp spikes stochastically: NEST draws from each VP's own generator,
the device from counter-based Philox streams keyed by NEST's rng_seed and the
node id, so the two can only agree in distribution (as two CPU VPs do). For it,
200 neurons on each VP get the same drive: their traces must be equal up to
each neuron's first spike, and the spike counts of the two sides must agree
within 4 standard deviations.
Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

# model: (dc amplitude, spike weight scale, extra parameters)
CASES = {
    "iaf_psc_alpha": (390.0, 60.0, {}),
    "iaf_psc_exp": (390.0, 60.0, {}),
    "iaf_psc_delta": (390.0, 1.5, {}),
    "izhikevich": (8.0, 3.0, {}),
    "gif_psc_exp": (260.0, 40.0, {}),
    "mat2_psc_exp": (650.0, 60.0, {}),
    # NEST's GSL models: rkf45 on the device (nestcl_rkf45.h), weights in nS for the conductance models
    "iaf_cond_alpha": (500.0, 3.0, {}),
    "iaf_cond_exp": (500.0, 3.0, {}),
    "iaf_cond_beta": (500.0, 3.0, {}),
    "iaf_cond_exp_sfa_rr": (700.0, 3.0, {}),
    "aeif_cond_alpha": (800.0, 5.0, {}),
    "aeif_cond_exp": (800.0, 5.0, {}),
    "aeif_psc_alpha": (800.0, 150.0, {}),
    "aeif_psc_exp": (800.0, 150.0, {}),
    "aeif_psc_delta": (800.0, 1.0, {}),
    "hh_psc_alpha": (700.0, 100.0, {}),
    "hh_cond_exp_traub": (700.0, 5.0, {}),
    "aeif_cond_alpha_astro": (800.0, 5.0, {}),
    "amat2_psc_exp": (650.0, 60.0, {}),
    "iaf_psc_exp_htum": (390.0, 60.0, {}),
    # as many synaptic ports as after-spike currents (two by default): the device holds every vector with one length
    "glif_psc": (300.0, 60.0, {"_receptor": 1, "tau_syn": [2.0, 4.0]}),
    "glif_psc_double_alpha": (300.0, 60.0, {"_receptor": 1, "tau_syn_fast": [2.0, 4.0], "tau_syn_slow": [6.0, 8.0],
                                            "amp_slow": [0.5, 0.3]}),
    "iaf_psc_alpha_multisynapse": (390.0, 60.0, {"_receptor": 1, "tau_syn": [2.0]}),
    "iaf_psc_exp_multisynapse": (390.0, 60.0, {"_receptor": 1, "tau_syn": [2.0]}),
    # one receptor, and adaptation vectors of the same length: the device holds every vector with one length
    "gif_psc_exp_multisynapse": (260.0, 40.0, {"_receptor": 1, "tau_syn": [2.0], "tau_sfa": [100.0], "q_sfa": [10.0],
                                               "tau_stc": [10.0], "q_stc": [5.0]}),
    "gif_cond_exp": (260.0, 5.0, {}),
    # multi-receptor GSL models: the state vector y_ has A + B * K elements (2 + 2 K for the aeif ones);
    # conductance-based multisynapse models refuse negative weights (_positive: |w|)
    "aeif_cond_alpha_multisynapse": (800.0, 5.0, {"_receptor": 1, "_positive": True, "E_rev": [0.0, -85.0],
                                                  "tau_syn": [0.2, 2.0]}),
    "aeif_cond_beta_multisynapse": (800.0, 5.0, {"_receptor": 1, "_positive": True, "E_rev": [0.0, -85.0],
                                                 "tau_rise": [0.2, 0.5], "tau_decay": [2.0, 5.0]}),
    "glif_cond": (300.0, 5.0, {"_receptor": 1, "_positive": True, "tau_syn": [0.2, 2.0], "E_rev": [0.0, -85.0]}),
    "gif_cond_exp_multisynapse": (260.0, 5.0, {"_receptor": 1, "_positive": True, "tau_syn": [2.0], "E_rev": [0.0],
                                               "tau_sfa": [100.0], "q_sfa": [10.0], "tau_stc": [10.0],
                                               "q_stc": [5.0]}),
    # ht_neuron: helpers with constant locals (m_NMDA_, D_eq_KNa_) inlined, receptor 1 is AMPA
    "ht_neuron": (50.0, 2.0, {"_receptor": 1, "_positive": True}),
    "iaf_chs_2007": (0.0, 3.0, {"_positive": True}),
    "ignore_and_fire": (0.0, 1.0, {}),
    # Clopath models: the device keeps no Clopath history (only clopath_synapse reads it)
    "aeif_psc_delta_clopath": (800.0, 1.0, {}),
    "hh_psc_alpha_clopath": (700.0, 100.0, {}),
    # Poisson spike counts per step (dead_time 0), sent with their multiplicity, and adaptation
    "pp_psc_delta": (200.0, 1.0, {"dead_time": 0.0, "c_1": 0.0, "c_2": 400.0, "c_3": 0.2,
                                  "tau_sfa": [50.0], "q_sfa": [2.0]}),
    # repeats its input spikes (no current input, no recordables); flush events off (the default)
    "parrot_neuron": (0.0, 1.0, {}),
    # gap-junction models without gap junctions: update_( ..., false ), the gap current zero
    "hh_psc_alpha_gap": (200.0, 100.0, {}),
    "hh_cond_beta_gap_traub": (700.0, 5.0, {}),
    # the last spike time (get_spiketime_ms) on the device; its offsets are tested by run_offset_payload
    "iaf_tum_2000": (390.0, 60.0, {"tau_fac": 20.0}),
    # precise spike times: the device sends the offset of each spike within its step, which the spike
    # recorder subtracts from the step's time (a dropped offset would move a spike by up to 0.1 ms); the
    # AHP's std::exp in update() is glibc's on the device too (nestcl_glibc_exp): bit for bit
    "iaf_chxk_2008": (3000.0, 3.0, {}),  # C_m 1000 pF: fires from about 2 nA
    # three input buffers, one per synapse type (AMPA = receptor 1); the NMDA jump its spikes carry as their
    # offset is tested by run_offset_payload; exp in update() (the presynaptic s_NMDA) is glibc's: bit for bit
    "iaf_bw_2001": (500.0, 0.5, {"_receptor": 1, "_positive": True}),
    # two input buffers per compartment (6 spike channels, 3 current channels), by NEST's receptor names
    "iaf_cond_alpha_mc": (500.0, 3.0, {"_receptor": "soma_exc", "_positive": True, "_dc_receptor": "soma_curr"}),
    # precise spike times (NEST's SliceRingBuffer): input spikes off the grid (_precise), staged from the node's own
    # queue in NEST's order and taken one by one in the step at their offsets; the models' helpers (emit_spike_,
    # propagate_, threshold_distance), regula_falsi and IAFPropagator run on the device; std::exp and std::expm1
    # are glibc's and numerics::expm1 NEST's own series, bit for bit; std::log (iaf_psc_delta_ps's threshold
    # crossing) is the portable nestcl_log, which equals glibc's on this drive's 24 crossings but is not glibc's
    "iaf_psc_exp_ps": (390.0, 60.0, {"_precise": True}),
    "iaf_psc_exp_ps_lossless": (390.0, 60.0, {"_precise": True}),
    "iaf_psc_alpha_ps": (390.0, 60.0, {"_precise": True}),
    "iaf_psc_delta_ps": (390.0, 1.5, {"_precise": True}),
    # repeats each input spike at its precise time (no current input, no recordables)
    "parrot_neuron_ps": (0.0, 1.0, {"_precise": True}),
}


def drive(seed, scale, precise=False):
    rng = np.random.default_rng(seed)
    times = np.round(np.sort(rng.choice(np.arange(1, 8000), size=900, replace=False)) * 0.1, 1)
    k = rng.integers(-(1 << 16), 1 << 16, size=times.size)
    weights = k * (scale / 65536.0)
    if precise:
        # off the grid: each spike up to 0.0999 ms before its grid point, so that it travels with an offset;
        # every tenth spike twice at the same time, so that simultaneous events are covered too
        times = np.round(times - rng.integers(1, 1000, size=times.size) * 1e-4, 4)
        t2, w2 = np.concatenate([times, times[::10]]), np.concatenate([weights, weights[::10]])
        order = np.argsort(t2, kind="stable")
        times, weights = t2[order], w2[order]
    return times.tolist(), weights.tolist()


STOCHASTIC = {"gif_psc_exp", "gif_cond_exp", "gif_psc_exp_multisynapse", "gif_cond_exp_multisynapse", "pp_psc_delta"}


def run(model):
    dc_amp, scale, extra = CASES[model]
    extra = dict(extra)
    receptor = extra.pop("_receptor", 0)  # models whose spikes need a receptor port (multisynapse, glif)
    positive = extra.pop("_positive", False)
    dc_receptor = extra.pop("_dc_receptor", 0)
    tolerance = extra.pop("_tolerance", 0.0)  # recordables and spike times (not sample times), relative
    precise = extra.pop("_precise", False)  # spikes off the grid (a spike_generator with precise_times)
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, "resolution": 0.1,
                          "nestcl_device_min_work": 0})
    if isinstance(receptor, str) or isinstance(dc_receptor, str):  # NEST's receptor names (iaf_cond_alpha_mc)
        types = nest.GetDefaults(model)["receptor_types"]
        receptor = types[receptor] if isinstance(receptor, str) else receptor
        dc_receptor = types[dc_receptor] if isinstance(dc_receptor, str) else dc_receptor
    n = 400 if model in STOCHASTIC else 2
    neurons = nest.Create(model, n, params=extra)
    vps = neurons.get("vp")
    if sorted(set(vps)) != [0, 1] or list(vps).count(1) != n // 2:
        raise AssertionError("expected the neurons split over both VPs, got %s" % vps)
    times, weights = drive(11, scale, precise)
    if positive:
        weights = [abs(w) for w in weights]
    sg = nest.Create("spike_generator", params={"spike_times": times, "spike_weights": weights,
                                                "precise_times": precise})
    dc = nest.Create("dc_generator", params={"amplitude": dc_amp, "start": 50.0, "stop": 650.0})
    recordables = [str(r) for r in nest.GetDefaults(model).get("recordables", [])]  # parrot_neuron has none
    mm = nest.Create("multimeter", params={"record_from": recordables, "interval": 0.1})
    sr = nest.Create("spike_recorder")
    nest.Connect(sg, neurons, syn_spec={"delay": 1.0, "receptor_type": receptor})
    if dc_amp:  # 0: a model without current input (iaf_chs_2007, ignore_and_fire)
        nest.Connect(dc, neurons, syn_spec={"receptor_type": dc_receptor})
    if recordables:  # a multimeter cannot connect to a model without recordables (parrot_neuron)
        nest.Connect(mm, neurons)
    nest.Connect(neurons, sr)
    nest.Simulate(400.0)
    # GetStatus between the calls: V_m, or the first recordable the status has (ignore_and_fire has none)
    status = neurons[0].get()
    vkey = "V_m" if "V_m" in status else next((r for r in recordables if r in status), None)
    mid = [neurons[k].get(vkey) if vkey else None for k in range(2)]
    nest.Simulate(400.3)  # a partial super step at the end
    ev = mm.get("events")
    spikes = sr.get("events")
    ids = neurons.tolist()
    if model in STOCHASTIC:
        return run_stochastic(model, ids, vps, ev, spikes, recordables)
    out = {}
    for nid in ids:
        sel = ev["senders"] == nid
        out[nid] = {r: np.asarray(ev[r])[sel] for r in ["times"] + recordables}
        out[nid]["spikes"] = np.sort(np.asarray(spikes["times"])[np.asarray(spikes["senders"]) == nid])
    a, b = out[ids[0]], out[ids[1]]
    problems = []
    for key in ["times", "spikes"] + recordables:
        x, y = a[key], b[key]
        if tolerance and key != "times" and x.shape == y.shape and x.dtype == np.float64 and \
                np.all(np.abs(x - y) <= tolerance * np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))):
            continue
        if x.shape != y.shape or not np.array_equal(x.view(np.uint64) if x.dtype == np.float64 else x,
                                                     y.view(np.uint64) if y.dtype == np.float64 else y):
            n = min(x.size, y.size)
            diff = np.nonzero(x[:n] != y[:n])[0]
            where = (" first at index %d: %r vs %r" % (diff[0], x[diff[0]], y[diff[0]])) if diff.size else ""
            problems.append("%s differs (%d vs %d values)%s" % (key, x.size, y.size, where))
    if mid[0] != mid[1] and not (tolerance and abs(mid[0] - mid[1]) <= tolerance * max(1.0, abs(mid[0]))):
        problems.append("GetStatus between Simulate calls: V_m %r vs %r" % (mid[0], mid[1]))
    n_spk = a["spikes"].size
    if n_spk < 3:
        problems.append("only %d spikes: the drive does not test spike emission" % n_spk)
    device_s = nest.GetKernelStatus("nestcl_time_update")
    if not device_s > 0:
        problems.append("nestcl_time_update is %r: the stream VP did not run on the device" % device_s)
    status = "PASS" if not problems else "FAIL"
    print("%s %-16s %4d spikes, %6d samples of %d recordables; device update %.3f s%s"
          % (status, model, n_spk, a["times"].size, len(recordables), device_s,
             "" if not problems else ": " + "; ".join(problems)))
    return not problems


def run_stochastic(model, ids, vps, ev, spikes, recordables):
    senders = np.asarray(spikes["senders"])
    stimes = np.asarray(spikes["times"])
    counts = {0: 0, 1: 0}
    for nid, vp in zip(ids, vps):
        counts[vp] += int(np.sum(senders == nid))
    problems = []
    a, b = ids[0], ids[1]  # neighbours: one on each VP
    first = min([stimes[senders == x].min() for x in (a, b) if np.any(senders == x)] or [np.inf])
    sel_a = (np.asarray(ev["senders"]) == a) & (np.asarray(ev["times"]) < first)
    sel_b = (np.asarray(ev["senders"]) == b) & (np.asarray(ev["times"]) < first)
    for r in recordables:
        x, y = np.asarray(ev[r])[sel_a], np.asarray(ev[r])[sel_b]
        if x.size == 0 or not np.array_equal(x, y):
            problems.append("%s differs before the first spike (%d samples)" % (r, x.size))
    c0, c1 = counts[0], counts[1]
    sigma = np.sqrt(max(c0 + c1, 1))
    if abs(c0 - c1) > 4 * sigma or c0 + c1 < 100:
        problems.append("spike counts CPU VP %d vs stream VP %d (4 sigma = %.0f)" % (c0, c1, 4 * sigma))
    device_s = nest.GetKernelStatus("nestcl_time_update")
    if not device_s > 0:
        problems.append("the stream VP did not run on the device")
    print("%s %-16s stochastic: CPU VP %d spikes, stream VP %d spikes (4 sigma %.0f); traces equal for %d samples "
          "before the first spike%s" % ("PASS" if not problems else "FAIL", model, c0, c1, 4 * sigma,
                                         int(np.sum(sel_a)), "" if not problems else ": " + "; ".join(problems)))
    return not problems


def run_fixed_point_bound():
    """iaf_psc_exp with weights that are not multiples of 2**-32: NEST's double sum of each step's input
    reaches the device rounded to 2**-32, an error of at most 2**-33 per step, which the synaptic current
    (I <- I * P + input, P = exp(-h / tau_syn)) accumulates to at most 2**-33 / (1 - P)."""
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, "resolution": 0.1,
                          "nestcl_device_min_work": 0})
    neurons = nest.Create("iaf_psc_exp", 2)
    times, weights = drive(5, 1.0)
    weights = [45.60966637879629 * w for w in weights]  # hpc_benchmark's J_E in pA, times a k / 65536 in (-1, 1)
    sg = nest.Create("spike_generator", params={"spike_times": times, "spike_weights": weights})
    mm = nest.Create("multimeter", params={"record_from": ["I_syn_ex", "I_syn_in"], "interval": 0.1})
    nest.Connect(sg, neurons, syn_spec={"delay": 1.0})
    nest.Connect(mm, neurons)
    nest.Simulate(800.0)
    ev = mm.get("events")
    ids = neurons.tolist()
    problems = []
    worst = 0.0
    for key, tau in (("I_syn_ex", neurons[0].get("tau_syn_ex")), ("I_syn_in", neurons[0].get("tau_syn_in"))):
        a = np.asarray(ev[key])[np.asarray(ev["senders"]) == ids[0]]
        b = np.asarray(ev[key])[np.asarray(ev["senders"]) == ids[1]]
        bound = 2.0 ** -33 / (1.0 - np.exp(-0.1 / tau))
        dev = float(np.max(np.abs(a - b))) if a.size == b.size and a.size else np.inf
        worst = max(worst, dev / bound)
        if not dev <= bound:
            problems.append("%s deviates by %.3g pA, more than the bound %.3g pA" % (key, dev, bound))
        if dev == 0.0:
            problems.append("%s shows no rounding at all: the weights do not test the bound" % key)
    print("%s iaf_psc_exp with arbitrary weights: largest deviation %.2f of the fixed-point bound%s"
          % ("PASS" if not problems else "FAIL", worst, "" if not problems else ": " + "; ".join(problems)))
    return not problems


def run_failure():
    """aeif_cond_exp driven out of NEST's bounds on a stream VP: Simulate fails with NEST's
    NumericalInstability named, with the node id and the time. One thread, which is the stream VP:
    NEST 3.10 itself deadlocks when a node's update() throws with more than one thread (its
    update loop catches outside the loop that holds the barriers), on a CPU VP as on a stream VP."""
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 1, "nestcl_streams": 1, "nestcl_gpu_fraction": 1.0,
                          "resolution": 0.1, "nestcl_device_min_work": 0})
    neurons = nest.Create("aeif_cond_exp", 3)
    neurons[1].set({"I_e": -1e12})
    bad = neurons[1].get("global_id")
    problems = []
    msg = ""
    try:
        nest.Simulate(10.0)
        problems.append("Simulate succeeded although the neuron left NEST's bounds")
    except Exception as e:  # NEST raises its kernel exception as a Python exception of its class
        msg = type(e).__name__ + ": " + str(e)
        # NEST's own NumericalInstability, its message naming the device's failure record ("nestcl: ...")
        for want in ("nestcl: aeif_cond_exp", "NumericalInstability", "node %d " % bad, " ms"):
            if want not in msg:
                problems.append("the error does not name %r: %s" % (want, msg))
    print("%s failure on the stream VP is reported%s" % ("PASS" if not problems else "FAIL",
                                                        (": " + msg[msg.find("nestcl:"):][:120]) if not problems
                                                        else ": " + "; ".join(problems)))
    return not problems


def expect_host(what, model, want, build, threads=1):
    """build() makes a network with a node of `model` that a condition keeps off the device, and returns
    that node and a recorder of it. On a stream VP (every thread one) the node runs on the host: Simulate
    succeeds, nestcl_nodes counts it on the host with a reason naming all of want, and the recorder's
    events equal those with nestcl_streams 0 (NEST's own VPs), bit for bit."""
    problems, events, reason = [], [], ""
    for streams in (0, threads):
        nest.ResetKernel()
        nest.SetKernelStatus({"local_num_threads": threads, "nestcl_streams": streams, "resolution": 0.1,
                              "nestcl_device_min_work": 0})
        node, rec = build()
        try:
            nest.Simulate(30.0)
        except Exception as e:
            problems.append("Simulate failed with nestcl_streams %d: %s" % (streams, e))
            break
        events.append({k: np.asarray(v) for k, v in rec.get("events").items()})
        if streams:
            placed = nest.GetKernelStatus("nestcl_nodes").get(model, {})
            if placed.get("host", 0) < 1:
                problems.append("nestcl_nodes does not count it on the host: %r" % placed)
            reasons = list(placed.get("host_reasons", {}))
            reason = next((r for r in reasons if all(w in r for w in want)), "")
            if not reason:
                problems.append("no reason in nestcl_nodes names %r: %r" % (want, reasons))
    if len(events) == 2:
        a, b = events
        if set(a) != set(b) or any(not np.array_equal(a[k], b[k]) for k in a):
            problems.append("the recorder differs from nestcl_streams 0")
        elif sum(v.size for v in a.values()) == 0:
            problems.append("the recorder recorded nothing")
    print("%s %s runs on the host of a stream VP%s"
          % ("PASS" if not problems else "FAIL", what, (": " + reason[:160]) if not problems
             else ": " + "; ".join(problems)))
    return not problems


def multimeter_of(nodes, record_from=("V_m",)):
    mm = nest.Create("multimeter", params={"record_from": list(record_from), "interval": 0.1})
    nest.Connect(mm, nodes)
    return mm


def run_vector_host():
    """gif_psc_exp_multisynapse with one receptor but adaptation vectors of another length does not fit
    the device's layout (every vector member one length): it stays on the host, the members named."""
    def build():
        n = nest.Create("gif_psc_exp_multisynapse", 1, params={"tau_syn": [2.0], "tau_sfa": [100.0, 300.0],
                                                               "q_sfa": [10.0, 5.0], "I_e": 60.0})
        return n, multimeter_of(n)
    return expect_host("gif_psc_exp_multisynapse with vectors of different lengths", "gif_psc_exp_multisynapse",
                       ["State_", "entries"], build)


def run_clopath_host():
    """A Clopath neuron that clopath_synapse reads needs its Clopath history, which the device does not
    keep: it stays on the host. Two threads, both stream VPs."""
    def build():
        # A device cannot be the source of a plastic synapse in NEST: the spikes pass a parrot_neuron.
        gen = nest.Create("spike_generator", 1, params={"spike_times": [0.5, 4.5, 9.5]})
        pre = nest.Create("parrot_neuron", 1)
        post = nest.Create("aeif_psc_delta_clopath", 1, params={"I_e": 300.0})
        nest.Connect(gen, pre)
        nest.Connect(pre, post, syn_spec={"synapse_model": "clopath_synapse", "weight": 1.0, "delay": 1.0})
        return post, multimeter_of(post)
    return expect_host("a Clopath neuron read by clopath_synapse", "aeif_psc_delta_clopath", ["Clopath history"],
                       build, threads=2)


def run_flush_host():
    """parrot_neuron sends flush events when flush_event_send_interval is finite; the device sends none
    (it takes the default, infinite interval), so such a node stays on the host."""
    def build():
        gen = nest.Create("spike_generator", 1, params={"spike_times": [1.0, 7.5, 12.0]})
        p = nest.Create("parrot_neuron", 1, params={"flush_event_send_interval": 5.0})
        sr = nest.Create("spike_recorder")
        nest.Connect(gen, p)
        nest.Connect(p, sr)
        return p, sr
    return expect_host("a parrot_neuron with flush events", "parrot_neuron", ["flush events"], build)


def run_gap_host():
    """A gap-junction model in a network with gap junctions needs gap-junction events and NEST's waveform
    relaxation, neither of which the device runs: such nodes stay on the host, where NEST runs both."""
    def build():
        n = nest.Create("hh_psc_alpha_gap", 2, params={"I_e": 200.0})
        n[0].I_e = 400.0
        nest.Connect(n[0], n[1], {"rule": "one_to_one", "make_symmetric": True},
                     {"synapse_model": "gap_junction", "weight": 0.5})
        return n, multimeter_of(n)
    return expect_host("a gap-junction model with gap junctions", "hh_psc_alpha_gap", ["gap-junction"], build)


def run_wfr_order_host():
    """The device computes the gap current with NEST's default wfr_interpolation_order 3."""
    def build():
        nest.SetKernelStatus({"wfr_interpolation_order": 1})
        n = nest.Create("hh_cond_beta_gap_traub", 1, params={"I_e": 100.0})
        return n, multimeter_of(n)
    return expect_host("a gap-junction model under wfr_interpolation_order 1", "hh_cond_beta_gap_traub",
                       ["wfr_interpolation_order is 1"], build)


# model: (receptor that reads the offset, sender parameters, dc to make the senders fire, weight, the
# receivers' recordable that the offsets feed)
OFFSET_CASES = {
    "iaf_tum_2000": (1, {"tau_fac": 20.0, "U": 0.3}, 420.0, 200.0, "I_syn_ex"),
    "iaf_bw_2001": (3, {}, 500.0, 0.5, "s_NMDA"),
}


def run_offset_payload(model):
    """iaf_tum_2000 sends the jump of its active resources as its spikes' offset, iaf_bw_2001 the jump of
    its presynaptic s_NMDA; a spike on the reading receptor (tum: 1, bw: NMDA = 3) adds weight * offset.
    Two senders (one on each VP, driven alike) each reach a receiver on the other VP on that receptor: the
    stream VP's sender carries the device's offsets to a CPU node through NEST, and the CPU sender's offsets
    reach the device node through NEST's own delivery (the device CSR carries no offsets, so such
    connections stay with NEST). Both receivers' traces must agree, and the recordable the offsets feed
    must have grown: a dropped
    offset (0) would leave it at 0. The offset-fed state may differ by the device ring's fixed-point rounding
    of each input (2**-33 per input spike), the membrane potential within 1e-12."""
    receptor, params, dc_amp, weight, fed = OFFSET_CASES[model]
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, "resolution": 0.1,
                          "nestcl_device_min_work": 0})
    pre = nest.Create(model, 2, params=params)
    post = nest.Create(model, 2, params={"V_th": 1000.0})  # receivers: no spikes of their own
    problems = []
    vp_pre, vp_post = pre.get("vp"), post.get("vp")
    if sorted(vp_pre) != [0, 1] or list(vp_post) != list(vp_pre):
        problems.append("unexpected placement: senders on %s, receivers on %s" % (vp_pre, vp_post))
    dc = nest.Create("dc_generator", params={"amplitude": dc_amp})
    nest.Connect(dc, pre)
    # sender k -> receiver 1 - k: across the two VPs
    syn = {"weight": weight, "delay": 1.0, "receptor_type": receptor}
    nest.Connect(pre[0], post[1], syn_spec=syn)
    nest.Connect(pre[1], post[0], syn_spec=syn)
    mm = nest.Create("multimeter", params={"record_from": ["V_m", fed], "interval": 0.1})
    sr = nest.Create("spike_recorder")
    nest.Connect(mm, post)
    nest.Connect(pre, sr)
    nest.Simulate(300.0)
    ev = mm.get("events")
    senders = np.asarray(ev["senders"])
    ids = post.tolist()
    n_pre = [int(np.sum(np.asarray(sr.get("events")["senders"]) == p)) for p in pre.tolist()]
    if min(n_pre) < 5 or n_pre[0] != n_pre[1]:
        problems.append("senders fired %s spikes: expected equal counts of at least 5" % n_pre)
    # The input of each step reaches the device node's ring rounded to 2**-32 (its fixed point; the device
    # has no float atomics), an error of at most 2**-33 per input spike, which the state the offsets feed
    # (I_syn_ex, s_NMDA) carries on (decaying): at most n_in * 2**-33 apart. V_m, within 1e-12 (relative).
    n_in = max(n_pre)
    for key, bound in (("V_m", None), (fed, n_in * 2.0 ** -33)):
        x = np.asarray(ev[key])[senders == ids[0]]
        y = np.asarray(ev[key])[senders == ids[1]]
        tol = 1e-12 * np.maximum(1.0, np.abs(x)) if bound is None else bound
        if x.shape != y.shape or not np.all(np.abs(x - y) <= tol):
            dev = float(np.max(np.abs(x - y))) if x.shape == y.shape and x.size else float("inf")
            problems.append("%s of the two receivers differs by %.3g (allowed %.3g)"
                            % (key, dev, float(np.max(tol))))
    for nid in ids:
        fed_values = np.asarray(ev[fed])[senders == nid]
        if not (fed_values.size and np.max(fed_values) > 0.01):
            problems.append("receiver %d: %s stayed at %r: the offsets did not arrive"
                            % (nid, fed, float(np.max(fed_values)) if fed_values.size else None))
    device_s = nest.GetKernelStatus("nestcl_time_update")
    if not device_s > 0:
        problems.append("the stream VP did not run on the device")
    print("%s %s offsets from a stream VP and to it: %s spikes per sender%s"
          % ("PASS" if not problems else "FAIL", model, n_pre, "" if not problems else ": " + "; ".join(problems)))
    return not problems


def run_precise_chain():
    """iaf_psc_exp_ps senders, one on each VP driven alike, each reaching an iaf_psc_exp_ps receiver on the other VP:
    the stream VP's sender sends its spikes' precise offsets through NEST to a CPU node, the CPU sender's reach the
    device node through the node's own SliceRingBuffer. The senders' spike times must be off the grid (offsets
    arrive) and equal, and the receivers' traces equal, bit for bit."""
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, "resolution": 0.1,
                          "nestcl_device_min_work": 0})
    pre = nest.Create("iaf_psc_exp_ps", 2)
    post = nest.Create("iaf_psc_exp_ps", 2, params={"V_th": 1000.0})
    problems = []
    if sorted(pre.get("vp")) != [0, 1] or list(post.get("vp")) != list(pre.get("vp")):
        problems.append("unexpected placement: senders on %s, receivers on %s" % (pre.get("vp"), post.get("vp")))
    dc = nest.Create("dc_generator", params={"amplitude": 420.0})
    nest.Connect(dc, pre)
    syn = {"weight": 400.0, "delay": 1.0}
    nest.Connect(pre[0], post[1], syn_spec=syn)
    nest.Connect(pre[1], post[0], syn_spec=syn)
    mm = nest.Create("multimeter", params={"record_from": ["V_m"], "interval": 0.1})
    sr = nest.Create("spike_recorder")
    nest.Connect(mm, post)
    nest.Connect(pre, sr)
    nest.Simulate(300.0)
    ev, spk = mm.get("events"), sr.get("events")
    t = [np.sort(np.asarray(spk["times"])[np.asarray(spk["senders"]) == p]) for p in pre.tolist()]
    if t[0].size < 5 or t[0].size != t[1].size or not np.array_equal(t[0], t[1]):
        problems.append("sender spike times differ: %s vs %s" % (t[0][:4], t[1][:4]))
    off_grid = np.abs(t[0] * 10.0 - np.round(t[0] * 10.0)) > 1e-9
    if not np.all(off_grid):
        problems.append("%d of %d spike times on the grid: no offsets" % (int(np.sum(~off_grid)), t[0].size))
    senders = np.asarray(ev["senders"])
    x, y = (np.asarray(ev["V_m"])[senders == q] for q in post.tolist())
    if x.shape != y.shape or not np.array_equal(x, y):
        problems.append("receivers' V_m differ by %.3g" % (float(np.max(np.abs(x - y))) if x.shape == y.shape else np.inf))
    if not (x.size and np.max(x) - np.min(x) > 1.0):
        problems.append("the receivers' V_m did not move: no input arrived")
    print("%s iaf_psc_exp_ps precise spikes from a stream VP and to it: %d spikes per sender%s"
          % ("PASS" if not problems else "FAIL", t[0].size, "" if not problems else ": " + "; ".join(problems)))
    return not problems


def main():
    nest.verbosity = nest.VerbosityLevel.WARNING
    models = sys.argv[1:] or list(CASES)
    ok = [run_precise_chain() if m == "precise_chain" else run(m) for m in models]
    if len(sys.argv) == 1:
        ok.append(run_fixed_point_bound())
        ok.append(run_failure())
        ok.append(run_vector_host())
        ok.append(run_clopath_host())
        ok.append(run_flush_host())
        ok.append(run_gap_host())
        ok.append(run_wfr_order_host())
        ok.extend(run_offset_payload(m) for m in OFFSET_CASES)
        ok.append(run_precise_chain())
    print("%d passed, %d failed" % (sum(ok), len(ok) - sum(ok)))
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
