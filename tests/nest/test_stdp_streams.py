"""STDP synapses on a stream VP against the same synapses on a CPU VP (PyNEST, patched NEST).

local_num_threads 2, nestcl_streams 1: of two iaf_psc_delta targets one lives
on the stream VP (its incoming STDP synapse then runs on the device: nestcl's
translation of NEST's own send(), the target's spike history on the device)
and one on NEST's CPU thread (NEST's own code). Pre- and postsynaptic spike
times are forced by spike_generators (100 mV inputs make an iaf_psc_delta
fire in the step they arrive); both pairs get the same trains, with pairings
at 0 ms, at exactly the dendritic delay, bursts and long pauses (refractoriness
drops some, and a grown weight adds postsynaptic ones: both sides alike). The run is
40 Simulate calls of 25 ms (each exports the synapses to the device and
writes them back); after each, both synapses' weight and Kplus must be equal
bit for bit, for stdp_synapse and stdp_pl_synapse_hom (hpc_benchmark's
parameters), and the device must hold the one synapse
(nestcl_device_plastic_synapses). Exit 0 pass, 1 fail."""
import struct
import sys

import numpy as np

import nest

MODELS = {
    "stdp_synapse": {"lambda": 0.05, "alpha": 1.1, "mu_plus": 0.5, "mu_minus": 0.7, "Wmax": 5.0, "tau_plus": 15.0},
    "stdp_pl_synapse_hom": {"alpha": 0.0513, "lambda": 0.1, "mu": 0.4, "tau_plus": 15.0},
}
DELAY = 1.5


def trains(seed):
    rng = np.random.default_rng(seed)
    pre = np.sort(rng.choice(np.arange(20, 9800, 3), size=140, replace=False)) * 0.1
    post = []
    for t in pre:
        r = rng.random()
        if r < 0.2:
            post.append(t)              # together
        elif r < 0.35:
            post.append(t + DELAY)      # at exactly the dendritic delay
        elif r < 0.5:
            post.extend([t + 3.0, t + 5.5, t + 8.0])  # a burst after
        elif r < 0.6:
            post.append(t - 4.0)
    post = np.unique(np.round(np.asarray(post), 1))
    post = post[(post > 1.0) & (post < 990.0)]
    return np.round(pre, 1).tolist(), post.tolist()


def bits(x):
    return struct.pack("<d", float(x))


def run(model, params):
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, "resolution": 0.1,
                          "nestcl_device_min_work": 0})
    nrn = nest.Create("iaf_psc_delta", 4, params={"t_ref": 2.0})
    vps = nrn.get("vp")
    on = [n for n, v in zip(nrn.tolist(), vps) if v == 1]
    off = [n for n, v in zip(nrn.tolist(), vps) if v == 0]
    if len(on) != 2 or len(off) != 2:
        raise AssertionError("expected two neurons on each VP, got %s" % vps)
    pre_times, post_times = trains(7)
    g_pre = nest.Create("spike_generator", params={"spike_times": [t - 1.0 for t in pre_times]})
    g_post = nest.Create("spike_generator", params={"spike_times": [t - 1.0 for t in post_times]})
    name = "my_" + model
    nest.CopyModel(model, name, params)
    pairs = []  # (pre, post): post on the stream VP first, then on the CPU VP
    for side in (on, off):
        pre, post = nest.NodeCollection([side[0]]), nest.NodeCollection([side[1]])
        nest.Connect(g_pre, pre, syn_spec={"weight": 100.0, "delay": 1.0})
        nest.Connect(g_post, post, syn_spec={"weight": 100.0, "delay": 1.0})
        nest.Connect(pre, post, syn_spec={"synapse_model": name, "weight": 1.0, "delay": DELAY})
        pairs.append((pre, post))
    sr = nest.Create("spike_recorder")
    nest.Connect(nrn, sr)
    traj = [[], []]
    for _ in range(40):
        nest.Simulate(25.0)
        for k, (pre, post) in enumerate(pairs):
            c = nest.GetConnections(pre, post)
            traj[k].append((c.get("weight"), c.get("Kplus") if "Kplus" in c.get() else 0.0))
    problems = []
    for step, (a, b) in enumerate(zip(traj[0], traj[1])):
        if bits(a[0]) != bits(b[0]) or bits(a[1]) != bits(b[1]):
            problems.append("after %d ms: stream VP (w %r, Kplus %r), CPU VP (w %r, Kplus %r)"
                            % (25 * (step + 1), a[0], a[1], b[0], b[1]))
            break
    ev = sr.get("events")
    counts = {n: int(np.sum(np.asarray(ev["senders"]) == n)) for n in nrn.tolist()}
    n_dev = nest.GetKernelStatus("nestcl_device_plastic_synapses")
    if n_dev != 1:
        problems.append("nestcl_device_plastic_synapses is %r, expected 1" % n_dev)
    # Refractoriness drops forced spikes that come too close, and a grown weight adds postsynaptic ones: the two
    # sides must still spike alike, and most forced spikes must be there.
    if counts[on[0]] != counts[off[0]] or counts[on[1]] != counts[off[1]] or counts[on[0]] < len(pre_times) // 2 \
            or counts[on[1]] < len(post_times) // 2:
        problems.append("spike counts %s (forced: pre %d, post %d)" % (counts, len(pre_times), len(post_times)))
    w = [t[0] for t in traj[0]]
    if len(set(w)) < 10:
        problems.append("the weight hardly moved: %s" % w[:5])
    print("%s %-20s %d pre, %d post spikes; weight %.17g -> %.17g over 40 Simulate calls, stream VP %s CPU VP%s"
          % ("PASS" if not problems else "FAIL", model, counts[on[0]], counts[on[1]], 1.0, w[-1],
             "==" if not problems else "!=", "" if not problems else ": " + "; ".join(problems)))
    return not problems


def main():
    nest.set_verbosity("M_ERROR")
    ok = True
    for model, params in MODELS.items():
        ok = run(model, params) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
