"""A Brunel network (iaf_psc_alpha, fixed_indegree, static synapses with weights
that are multiples of 2**-16 pA, NEST's own poisson_generator) in a patched NEST
with local_num_threads 2 and nestcl_streams 0, 1 and 2: the spike trains must be
identical (same VP count and seed, so NEST draws the same network and the same
Poisson input; the device sums exact weights in fixed point), with every
neuron->neuron synapse onto a stream VP's neurons resident on the device and
the simulation split into two Simulate calls, the first ending inside a slice
while inhibitory spikes (delay 2.3 ms > min_delay) are in flight. With
nestcl_device_poisson (Philox draws on the device instead of NEST's generator)
and with nestcl_gpu_fraction 0.8 (80 % of the neurons on the stream VP, in
weighted blocks) the rate and CV must lie within NEST's spread over 6 seeds:
4 standard deviations of the mean, or 5 % of it where that is wider.
Prints rate and CV.
Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

NE, NI, CE, CI = 800, 200, 80, 20
J, G = 32.0, 6.0            # pA; inhibitory weight -G * J
RATE = 9000.0              # Hz per neuron
SIMTIME = 300.0


def simulate(threads, streams, seed=1234, **keys):
    """The network on this process's share of VPs; returns its (senders, times), sorted."""
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": threads, "nestcl_streams": streams, "rng_seed": seed,
                          "resolution": 0.1})
    nest.SetKernelStatus(keys)
    params = {"E_L": 0.0, "V_th": 20.0, "V_reset": 10.0, "t_ref": 2.0, "C_m": 250.0, "tau_m": 20.0,
              "tau_syn_ex": 0.5, "tau_syn_in": 0.5, "V_m": 0.0}
    ex = nest.Create("iaf_psc_alpha", NE, params=params)
    inh = nest.Create("iaf_psc_alpha", NI, params=params)
    allp = ex + inh
    allp.V_m = nest.random.uniform(0.0, 20.0)
    noise = nest.Create("poisson_generator", params={"rate": RATE})
    sr = nest.Create("spike_recorder")
    nest.Connect(ex, allp, {"rule": "fixed_indegree", "indegree": CE}, {"weight": J, "delay": 1.5})
    nest.Connect(inh, allp, {"rule": "fixed_indegree", "indegree": CI}, {"weight": -G * J, "delay": 2.3})
    nest.Connect(noise, allp, syn_spec={"weight": J, "delay": 1.5})
    nest.Connect(allp, sr)
    # Two Simulate calls, the first ending inside a slice of min_delay (1.5 ms), with inhibitory
    # spikes in flight (delay 2.3 ms): the device's ring must carry them over.
    nest.Simulate(100.0)
    nest.Simulate(SIMTIME - 100.0)
    ev = sr.get("events")
    order = np.lexsort((np.asarray(ev["senders"]), np.asarray(ev["times"])))
    return np.asarray(ev["senders"])[order], np.asarray(ev["times"])[order]


def rate_cv(senders, times):
    rate = senders.size / (NE + NI) / (SIMTIME / 1000.0)
    cvs = []
    for nid in np.unique(senders):
        isi = np.diff(times[senders == nid])
        if isi.size > 2:
            cvs.append(isi.std() / isi.mean())
    return rate, (float(np.mean(cvs)) if cvs else float("nan"))


def run(streams, seed=1234, **keys):
    senders, times = simulate(2, streams, seed, **keys)
    rate, cv = rate_cv(senders, times)
    ks = nest.GetKernelStatus()
    dev = ks["nestcl_time_update"]
    print("nestcl_streams %d%s: %d spikes, %.1f Hz, CV %.3f, device update %.3f s, %d synapses and %d generators "
          "on the device" % (streams, "".join(", %s %s" % kv for kv in sorted(keys.items())), senders.size, rate, cv,
                             dev, ks["nestcl_device_synapses"], ks["nestcl_device_generators"]))
    return senders, times, rate, dev, cv, ks["nestcl_device_synapses"], ks["nestcl_device_generators"]


def main():
    nest.verbosity = nest.VerbosityLevel.WARNING
    ref = run(0)
    failures = []
    if not 5.0 <= ref[2] <= 80.0:
        failures.append("rate %.1f Hz outside [5, 80]: the network is not in a regime worth comparing" % ref[2])
    for streams in (1, 2):
        s, t, _, dev, _, nsyn, _ = run(streams)
        if not (np.array_equal(s, ref[0]) and np.array_equal(t, ref[1])):
            failures.append("nestcl_streams %d: spike trains differ from nestcl_streams 0 (%d vs %d spikes)"
                            % (streams, s.size, ref[0].size))
        if not dev > 0:
            failures.append("nestcl_streams %d did not use the device" % streams)
        # Every neuron->neuron synapse onto a stream VP's neurons is delivered on the device.
        want = (NE + NI) * (CE + CI) * streams // 2
        if nsyn != want:
            failures.append("nestcl_streams %d: %d synapses on the device, expected %d" % (streams, nsyn, want))
    # NEST's seed-to-seed spread (CPU only), against which the runs that draw
    # differently (the device's Poisson input) must fall.
    seeds = [run(0, seed)[2:5:2] for seed in (11, 12, 13, 14, 15, 16)]
    rates, cvs = np.array([r for r, _ in seeds]), np.array([c for _, c in seeds])
    print("NEST over 6 seeds: rate %.2f +- %.2f Hz, CV %.3f +- %.3f" % (rates.mean(), rates.std(ddof=1), cvs.mean(),
                                                                      cvs.std(ddof=1)))
    # Runs that draw differently from NEST: the device's Poisson input, and
    # weighted placement (NEST's connection builders and V_m draws use the
    # random stream of each neuron's VP).
    for streams, keys in ((1, {"nestcl_device_poisson": True}), (2, {"nestcl_device_poisson": True}),
                          (1, {"nestcl_gpu_fraction": 0.8}),
                          (1, {"nestcl_gpu_fraction": 0.8, "nestcl_device_poisson": True})):
        _, _, rate, _, cv, nsyn, ngen = run(streams, 1234, **keys)
        name = ", ".join("%s %s" % kv for kv in sorted(keys.items()))
        want_gen = streams if keys.get("nestcl_device_poisson") else 0
        if ngen != want_gen:
            failures.append("%s with %d streams: %d generator replicas on the device, expected %d"
                            % (name, streams, ngen, want_gen))
        if "nestcl_gpu_fraction" in keys:
            # 80 % of E and of I on the stream VP (thread 1), each Create cut into blocks by largest remainder.
            want = int(round(0.8 * NE)) * (CE + CI) + int(round(0.8 * NI)) * (CE + CI)
            if nsyn != want:
                failures.append("%s: %d synapses on the device, expected %d (80 %% of the neurons)" % (name, nsyn, want))
        for what, x, xs in (("rate", rate, rates), ("CV", cv, cvs)):
            # 4 sigma, but at least 5 % of the mean: sigma from 6 seeds is itself uncertain (a 5-seed
            # estimate of the CV's sigma with weighted placement came out at 0.0045, NEST's at 0.002).
            tol = max(4 * xs.std(ddof=1), 0.05 * abs(xs.mean()))
            lo, hi = xs.mean() - tol, xs.mean() + tol
            if not lo <= x <= hi:
                failures.append("%s, %d streams: %s %.3f outside NEST's spread [%.3f, %.3f]"
                                % (name, streams, what, x, lo, hi))
    for f in failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
