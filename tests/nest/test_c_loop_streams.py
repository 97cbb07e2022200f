"""Stream VPs with too few neurons for the device (nestcl_device_min_work):
their translated neurons run their C loops on the VP's own thread, with the
same results as NEST and as the device (PyNEST, patched NEST).

1. A small network (iaf_psc_alpha and aeif_cond_exp, recurrent static
   synapses, NEST's poisson_generator, a multimeter), 2 threads: streams 0,
   streams 2 at the default nestcl_device_min_work (64 neuron-steps per
   slice; here 3 neurons x 10 steps per VP) and streams 2 with it 0 (every
   neuron on the device) give the same spikes and the same V_m traces; the
   default runs them as "c_loop" in nestcl_nodes with no kernel launch and
   no wait, 0 puts them on the device.
2. Precise spikes: iaf_psc_exp_ps with a one-step min delay (NEST's
   precise-spike accuracy tests' case) and off-grid input, streams 1 of 1
   thread: the same spike times, offsets included, as streams 0.
3. STDP onto a C-loop neuron: stdp_synapse's weight after 60 pairings equals
   streams 0's (NEST's connector, the node's spike history kept by the glue).
4. A change of side between two Simulate calls, the first ending inside a
   slice with input in flight: device then C loop, and C loop then device,
   give streams 0's spikes.
Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

failures = []


def reset(threads, streams, min_work=None, **keys):
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": threads, "nestcl_streams": streams, "resolution": 0.1,
                          "rng_seed": 4321, **keys})
    if min_work is not None:
        nest.SetKernelStatus({"nestcl_device_min_work": min_work})


def small_network(streams, min_work=None, split=None):
    """Case 1 (and 4 with split = [(ms, min_work), ...]): spikes, V_m traces and the kernel status."""
    reset(2, streams, min_work)
    lif = nest.Create("iaf_psc_alpha", 4, {"I_e": 450.0})
    adex = nest.Create("aeif_cond_exp", 2, {"I_e": 800.0})
    nrn = lif + adex
    nrn.V_m = [-70.0, -65.0, -60.0, -68.0, -70.0, -62.0]
    noise = nest.Create("poisson_generator", params={"rate": 3000.0})
    sr = nest.Create("spike_recorder")
    mm = nest.Create("multimeter", {"record_from": ["V_m"], "interval": 0.1})
    nest.Connect(nrn, nrn, {"rule": "fixed_indegree", "indegree": 3}, {"weight": 20.0, "delay": 1.0})
    nest.Connect(noise, nrn, syn_spec={"weight": 5.0, "delay": 1.0})
    nest.Connect(nrn, sr)
    nest.Connect(mm, nrn)
    for ms, mw in split or [(200.0, None)]:
        if mw is not None:
            nest.SetKernelStatus({"nestcl_device_min_work": mw})
        nest.Simulate(ms)
    ev, vm = sr.get("events"), mm.get("events")
    spikes = sorted(zip(ev["senders"], ev["times"]))
    trace = sorted(zip(vm["senders"], vm["times"], vm["V_m"]))
    ks = nest.GetKernelStatus(["nestcl_nodes", "nestcl_launches", "nestcl_waits"])
    return spikes, trace, ks


def check_small():
    ref_s, ref_v, _ = small_network(0)
    if len(ref_s) < 20:
        failures.append("case 1: too few spikes (%d) to prove much" % len(ref_s))
    for mw, want in ((None, "c_loop"), (0, "device")):
        s, v, (nodes, launches, waits) = small_network(2, mw)
        tag = "case 1, nestcl_device_min_work %s" % ("default" if mw is None else mw)
        if s != ref_s or v != ref_v:
            failures.append("%s: %d spikes and %d samples, streams 0 %d and %d, or values differ"
                            % (tag, len(s), len(v), len(ref_s), len(ref_v)))
        other = "device" if want == "c_loop" else "c_loop"
        for model, n in (("iaf_psc_alpha", 4), ("aeif_cond_exp", 2)):
            got = nodes.get(model, {})
            if got.get(want) != n or got.get(other) != 0:
                failures.append("%s: nestcl_nodes[%s] = %r, want %d %s" % (tag, model, got, n, want))
        if (want == "c_loop") != (launches == 0 and waits == 0):
            failures.append("%s: %d launches, %d waits" % (tag, launches, waits))
        print("%s: %d spikes, %d V_m samples as streams 0; %s; %d launches, %d waits"
              % (tag, len(s), len(v), want, launches, waits))


def precise(streams):
    reset(1, streams)
    nrn = nest.Create("iaf_psc_exp_ps", 2, {"I_e": [380.0, 420.0]})
    sg = nest.Create("spike_generator", {"spike_times": [3.01234, 7.55, 7.5501, 12.3456789, 30.0001],
                                         "precise_times": True})
    sr = nest.Create("spike_recorder")
    nest.Connect(sg, nrn, syn_spec={"weight": 150.0, "delay": 0.1})  # min_delay: one step
    nest.Connect(nrn[0], nrn[1], syn_spec={"weight": -40.0, "delay": 0.1})
    nest.Connect(nrn, sr)
    nest.Simulate(120.0)
    ev = sr.get("events")
    return sorted(zip(ev["senders"], ev["times"])), nest.GetKernelStatus("nestcl_nodes")


def check_precise():
    ref, _ = precise(0)
    got, nodes = precise(1)
    n = nodes.get("iaf_psc_exp_ps", {}).get("c_loop")
    if got != ref or len(ref) < 5 or n != 2:
        failures.append("case 2: %d precise spikes, streams 0 %d; nestcl_nodes %r" % (len(got), len(ref), nodes))
    else:
        print("case 2, iaf_psc_exp_ps with a one-step min delay: %d spikes at the same precise times; c_loop %d"
              % (len(got), n))


def stdp(streams):
    reset(1, streams)
    pre_times = np.arange(10.0, 610.0, 10.0)
    pre = nest.Create("spike_generator", {"spike_times": pre_times})
    post = nest.Create("spike_generator", {"spike_times": pre_times + 4.0})
    parrot = nest.Create("parrot_neuron")
    target = nest.Create("iaf_psc_delta", {"V_th": -69.0, "V_reset": -70.0, "E_L": -70.0, "t_ref": 1.0})
    nest.Connect(pre, parrot)
    nest.Connect(post, target, syn_spec={"weight": 100.0, "delay": 1.0})
    nest.Connect(parrot, target, syn_spec={"synapse_model": "stdp_synapse", "weight": 1.0, "delay": 1.0})
    nest.Simulate(700.0)
    conn = nest.GetConnections(parrot, target)
    return conn.get("weight"), nest.GetKernelStatus("nestcl_nodes").get("iaf_psc_delta", {}).get("c_loop")


def check_stdp():
    (w0, _), (w1, n) = stdp(0), stdp(1)
    if w0 != w1 or w0 == 1.0 or n != 1:
        failures.append("case 3: stdp_synapse weight %r, streams 0 %r; c_loop %r" % (w1, w0, n))
    else:
        print("case 3, stdp_synapse onto a C-loop iaf_psc_delta: weight %.12g as streams 0" % w1)


def check_switch():
    ref = small_network(0, split=[(50.3, None), (80.0, None)])[0]
    for first, second in ((0, 64), (64, 0)):
        s = small_network(2, split=[(50.3, first), (80.0, second)])[0]
        if s != ref:
            failures.append("case 4: nestcl_device_min_work %d then %d: %d spikes, streams 0 %d"
                            % (first, second, len(s), len(ref)))
        else:
            print("case 4, nestcl_device_min_work %d then %d (the first Simulate ends inside a slice): %d spikes "
                  "as streams 0" % (first, second, len(s)))


def main():
    nest.set_verbosity("M_ERROR")
    check_small()
    check_precise()
    check_stdp()
    check_switch()
    print("%s stream VPs running translated C loops%s" % ("PASS" if not failures else "FAIL",
                                                         "" if not failures else ": " + "; ".join(failures)))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
