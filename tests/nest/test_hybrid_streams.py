"""Hybrid stream VPs (issue 30): a network of iaf_psc_alpha E and I populations
and one population of iaf_bw_2001_exact, a spiking model of NEST 3.10 that the
translator refuses, connected both ways (E and I onto it on its AMPA and GABA
receptors, it onto E and I), all driven by NEST's own poisson_generator, in a
patched NEST with local_num_threads 2. The untranslated population is created
between E and I, so that on each stream VP its neurons lie between two device
groups. nestcl_streams 0, 1 and 2 must give identical spike trains (same VP
count and seed: the same network and the same Poisson input; weights onto the
device neurons are multiples of 2**-16 pA, which the device sums exactly),
iaf_bw_2001_exact must fire, and nestcl_nodes must say where each model's
neurons ran: every iaf_psc_alpha of the stream VPs on the device, every
iaf_bw_2001_exact on the host with the translator's reason. The simulation is
split into two Simulate calls, the first ending inside a slice.
Exit 0 pass, 1 fail."""
import sys

import numpy as np

import nest

NE, NX, NI = 80, 20, 20
J = 32.0                   # pA, onto iaf_psc_alpha
SIMTIME = 300.0


def simulate(streams, threads=2, seed=1234):
    """Returns (senders, times) sorted, the untranslated population's ids and nestcl_nodes (None with 0 streams)."""
    nest.ResetKernel()
    nest.SetKernelStatus({"local_num_threads": threads, "nestcl_streams": streams, "rng_seed": seed,
                          "resolution": 0.1})
    params = {"E_L": 0.0, "V_th": 20.0, "V_reset": 10.0, "t_ref": 2.0, "C_m": 250.0, "tau_m": 20.0,
              "tau_syn_ex": 0.5, "tau_syn_in": 0.5, "V_m": 0.0}
    ex = nest.Create("iaf_psc_alpha", NE, params=params)
    xx = nest.Create("iaf_bw_2001_exact", NX)  # between E and I: interleaved with the device groups
    inh = nest.Create("iaf_psc_alpha", NI, params=params)
    neurons = ex + inh
    neurons.V_m = nest.random.uniform(0.0, 20.0)
    noise = nest.Create("poisson_generator", params={"rate": 9000.0})
    sr = nest.Create("spike_recorder")
    nest.Connect(ex, neurons, {"rule": "fixed_indegree", "indegree": 8}, {"weight": J, "delay": 1.5})
    nest.Connect(inh, neurons, {"rule": "fixed_indegree", "indegree": 2}, {"weight": -6 * J, "delay": 2.3})
    nest.Connect(xx, neurons, {"rule": "fixed_indegree", "indegree": 4}, {"weight": J, "delay": 1.5})
    # iaf_bw_2001_exact's receptors: 1 AMPA, 2 GABA (conductances in nS)
    nest.Connect(ex, xx, {"rule": "fixed_indegree", "indegree": 8},
                 {"weight": 0.25, "delay": 1.5, "receptor_type": 1})
    nest.Connect(inh, xx, {"rule": "fixed_indegree", "indegree": 2},
                 {"weight": 0.5, "delay": 2.3, "receptor_type": 2})
    nest.Connect(noise, neurons, syn_spec={"weight": J, "delay": 1.5})
    nest.Connect(noise, xx, syn_spec={"weight": 0.5, "delay": 1.5, "receptor_type": 1})
    nest.Connect(neurons + xx, sr)
    nest.Simulate(100.0)  # ends inside a slice of min_delay (1.5 ms)
    nest.Simulate(SIMTIME - 100.0)
    ev = sr.get("events")
    senders, times = np.asarray(ev["senders"]), np.asarray(ev["times"])
    order = np.lexsort((senders, times))
    placed = nest.GetKernelStatus("nestcl_nodes") if streams else None
    if streams and nest.GetKernelStatus("nestcl_time_update") <= 0.0:
        placed = {"error": "nestcl_time_update is 0: no stream VP ran on the device"}
    return senders[order], times[order], xx.tolist(), placed


def check_placement(streams, placed, problems):
    """Every iaf_psc_alpha of the stream VPs on the device, every iaf_bw_2001_exact there on the host."""
    share = streams / 2.0
    want_dev, want_host = round((NE + NI) * share), round(NX * share)
    psc = placed.get("iaf_psc_alpha", {})
    bw = placed.get("iaf_bw_2001_exact", {})
    if psc.get("device") != want_dev or psc.get("host") != 0:
        problems.append("streams %d: iaf_psc_alpha placed %r, want %d on the device" % (streams, psc, want_dev))
    reasons = bw.get("host_reasons", {})
    if bw.get("device") != 0 or bw.get("host") != want_host or sum(reasons.values()) != want_host:
        problems.append("streams %d: iaf_bw_2001_exact placed %r, want %d on the host" % (streams, bw, want_host))
    elif not all(r.startswith("did not translate") and "iaf_bw_2001_exact.cpp:" in r for r in reasons):
        # the translator's own reason, with the place in the model's source
        problems.append("streams %d: iaf_bw_2001_exact's reasons %r" % (streams, list(reasons)))


def main():
    nest.set_verbosity("M_ERROR")
    problems = []
    ref_s, ref_t, xx, _ = simulate(0)
    n_x = int(np.isin(ref_s, xx).sum())
    if n_x == 0 or ref_s.size == n_x:
        problems.append("both kinds of neuron must fire: %d spikes, %d of iaf_bw_2001_exact" % (ref_s.size, n_x))
    for streams in (1, 2):
        s, t, _, placed = simulate(streams)
        if "error" in placed:
            problems.append("streams %d: %s" % (streams, placed["error"]))
            continue
        check_placement(streams, placed, problems)
        if not (np.array_equal(s, ref_s) and np.array_equal(t, ref_t)):
            problems.append("streams %d: %d spikes, against %d with streams 0 (first difference at %s)"
                            % (streams, s.size, ref_s.size, next((k for k in range(min(s.size, ref_s.size))
                                                                   if s[k] != ref_s[k] or t[k] != ref_t[k]), "end")))
        else:
            bw = placed["iaf_bw_2001_exact"]
            print("streams %d: %d spikes (%d of iaf_bw_2001_exact) identical to streams 0; nestcl_nodes: "
                  "iaf_psc_alpha %d on the device, iaf_bw_2001_exact %d on the host (%s)"
                  % (streams, s.size, n_x, placed["iaf_psc_alpha"]["device"], bw["host"],
                     next(iter(bw["host_reasons"]))[:100]))
    print("%s hybrid stream VPs: untranslated iaf_bw_2001_exact beside device iaf_psc_alpha%s"
          % ("PASS" if not problems else "FAIL", "" if not problems else ": " + "; ".join(problems)))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
