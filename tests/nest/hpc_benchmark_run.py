"""Runs NEST's own pynest/examples/hpc_benchmark.py with the parameters a user
edits in its params dict (threads, scale, times, output folder) and, on a
patched NEST, nestcl's kernel keys; with --static-ee its E->E synapses are the
static syn_ex (static_synapse_hpc at the STDP synapse's initial weight).
--seed N sets the RNG seed (the script's params entry "rng_seed" or its
nest.rng_seed; NEST 3.10's script sets none, so nest.rng_seed = N goes right
after its ResetKernel). --keys '{"nestcl_gpu_fraction": 1.0, ...}' sets more
kernel keys there (with --streams). --ee-weights adds, after the run, the mean, SD, count
and a 40-bin histogram of the weights (pA) of the E->E synapses onto the
first 200 E neurons.
Prints one JSON line: spikes of the recorded E neurons (count and SHA-256 of
the sorted (sender, time) list), rate, CV of ISI, the script's own presim and
sim times (and the build's), the real-time factor of the simulation, and
nestcl's figures (the path of the last Run and why, device time, the
Prepare's packing and export and its parts, each Simulate call's own Prepare
and wall time, what stayed resident, launches, waits and slices), NEST's
time_construction_connect and the process's peak RSS."""
import argparse
import glob
import hashlib
import json
import os
import re
import sys
import time

import numpy as np


def set_params(text, subs, static_ee):
    """hpc_benchmark.py's text with its params entries subs (name: Python literal) replaced, and with static_ee
    its E->E synapse model static (syn_ex); exits naming what it did not find."""
    for key, value in subs.items():
        text, n = re.subn(r'("%s":\s*)[^,]+,' % key, r"\g<1>%s," % value.replace("\\", "\\\\"), text, count=1)
        if n != 1:
            sys.exit("error: hpc_benchmark.py has no params entry %s" % key)
    if static_ee:
        text, n = re.subn(r'"synapse_model":\s*"stdp_pl_synapse_hom_hpc"', '"synapse_model": "syn_ex"', text)
        if n != 1:
            sys.exit("error: hpc_benchmark.py's E->E synapse was not found")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--streams", type=int, default=-1, help="nestcl_streams; -1: unpatched NEST, no key set")
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--simtime", type=float, default=250.0)
    ap.add_argument("--presimtime", type=float, default=50.0)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--static-ee", action="store_true")
    ap.add_argument("--seed", type=int, help="NEST rng_seed, 1 .. 2^32-2; default: the script's (NEST's default)")
    ap.add_argument("--ee-weights", action="store_true", help="report E->E weights onto the first 200 E neurons")
    ap.add_argument("--keys", default="{}", help="more kernel keys (JSON), set with the streams")
    a = ap.parse_args()
    if a.seed is not None and not 0 < a.seed < 2**32 - 1:
        ap.error("--seed must be in 1 .. %d" % (2**32 - 2))
    os.makedirs(a.out_dir, exist_ok=True)
    for f in glob.glob(os.path.join(a.out_dir, "*.dat")):
        os.remove(f)
    text = open(a.script).read()
    subs = {"num_threads": str(a.threads), "scale": repr(a.scale), "simtime": repr(a.simtime),
            "presimtime": repr(a.presimtime), "path_name": repr(a.out_dir),
            "log_file": repr(os.path.join(a.out_dir, "log"))}
    text = set_params(text, subs, a.static_ee)
    after_reset = []  # statements put right after the script's ResetKernel
    if a.seed is not None:
        text, n = re.subn(r'("rng_seed":\s*)[^,]+,', r"\g<1>%d," % a.seed, text, count=1)
        if n == 0:
            text, n = re.subn(r"(nest\.rng_seed\s*=\s*)[^;\n]+", r"\g<1>%d" % a.seed, text, count=1)
        if n == 0:
            after_reset.append("nest.rng_seed = %d" % a.seed)
    if a.streams >= 0:
        # The nestcl keys right after the script's ResetKernel (streams need the threads first).
        keys = '{"local_num_threads": %d, "nestcl_streams": %d}' % (a.threads, a.streams)
        after_reset.append("nest.SetKernelStatus(%s)" % keys)
        if json.loads(a.keys):
            after_reset.append("nest.SetKernelStatus(%r)" % json.loads(a.keys))
    if after_reset:
        text, n = re.subn(r"nest\.ResetKernel\(\)", "; ".join(["nest.ResetKernel()"] + after_reset), text)
        if n != 1:
            sys.exit("error: hpc_benchmark.py calls ResetKernel %d times, not once" % n)
    if a.ee_weights:
        # build_network keeps E_neurons local: also publish it in the script's globals.
        text, n = re.subn(r"^([ \t]*)(E_neurons = nest\.Create\(.*)$", r'\1\2\n\1globals()["E_neurons"] = E_neurons',
                          text, flags=re.M)
        if n != 1:
            sys.exit("error: hpc_benchmark.py's E population (E_neurons = nest.Create(...)) was not found")
    import resource

    import nest

    # Each Simulate's own Prepare (nestcl_time_prepare counts since ResetKernel) and wall time.
    calls, simulate = [], nest.Simulate

    def timed_simulate(t):
        p0 = nest.GetKernelStatus("nestcl_time_prepare") if a.streams >= 0 else 0.0
        w0 = time.perf_counter()
        simulate(t)
        calls.append({"ms": t, "wall_s": time.perf_counter() - w0,
                      "prepare_s": (nest.GetKernelStatus("nestcl_time_prepare") - p0) if a.streams >= 0 else None})

    # The nest module refuses new attributes: the script's calls go through the wrapper by name.
    text = text.replace("nest.Simulate(", "_nestcl_timed_simulate(")
    g = {"__name__": "__main__", "__file__": a.script, "_nestcl_timed_simulate": timed_simulate}
    exec(compile(text, a.script, "exec"), g)
    log = {}
    for f in glob.glob(os.path.join(a.out_dir, "log_*.dat")):
        for line in open(f):
            m = re.match(r"\s*\d+\s+\d+\s+(\S+)\s+#\s*(.+?)\s*$", line)
            if m:
                log[m.group(2)] = float(m.group(1))
    senders, times = [], []
    for f in glob.glob(os.path.join(a.out_dir, "*.dat")):
        if os.path.basename(f).startswith("log_"):
            continue
        for line in open(f):
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit():
                senders.append(int(parts[0]))
                times.append(float(parts[1]))
    s, t = np.asarray(senders, dtype=np.int64), np.asarray(times)
    order = np.lexsort((s, t))
    s, t = s[order], t[order]
    digest = hashlib.sha256(s.tobytes() + t.tobytes()).hexdigest()
    window = t >= a.presimtime
    cvs = []
    for nid in np.unique(s[window]):
        isi = np.diff(t[window][s[window] == nid])
        if isi.size > 2:
            cvs.append(isi.std() / isi.mean())
    n_rec = int(g["brunel_params"]["Nrec"])
    out = {"streams": a.streams, "threads": a.threads, "scale": a.scale, "static_ee": a.static_ee,
           "spikes": int(s.size), "spike_sha256": digest,
           "rate_hz": float(np.sum(window)) / max(n_rec, 1) / (a.simtime / 1000.0),
           "cv_isi": float(np.mean(cvs)) if cvs else None,
           "presim_time_s": log.get("presim_time"), "sim_time_s": log.get("sim_time"),
           "build_time_nodes_s": log.get("build_time_nodes"), "build_edge_time_s": log.get("build_edge_time"),
           "real_time_factor": log.get("sim_time", 0.0) / (a.simtime / 1000.0),
           # NEST's own time_simulate: the last Simulate's run without its Prepare and Cleanup (nestcl's export)
           "time_simulate_s": nest.GetKernelStatus("time_simulate"),
           "real_time_factor_run": nest.GetKernelStatus("time_simulate") / (a.simtime / 1000.0),
           "nestcl_time_update_s": nest.GetKernelStatus("nestcl_time_update") if a.streams >= 0 else None,
           "nestcl_device_plastic_synapses": nest.GetKernelStatus("nestcl_device_plastic_synapses")
           if a.streams >= 0 else None,
           "seed": a.seed if a.seed is not None else nest.rng_seed,
           "time_construction_connect_s": nest.GetKernelStatus("time_construction_connect"),
           "simulate_calls": calls,
           # ru_maxrss: the process's peak resident set in KiB (Linux); on PoCL it holds the device's bytes too
           "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2.0**20}
    if a.streams >= 0:
        ks = nest.GetKernelStatus()
        for k in ("nestcl_simulate_path", "nestcl_simulate_path_reason", "nestcl_time_prepare", "nestcl_time_stage",
                  "nestcl_time_emit", "nestcl_time_deliver", "nestcl_launches", "nestcl_waits", "nestcl_slices",
                  "nestcl_device_synapses", "nestcl_device_generators", "nestcl_gpu_fraction",
                  "nestcl_gpu_fraction_source", "nestcl_device_name", "nestcl_device_bytes",
                  "nestcl_time_prepare_parts", "nestcl_resident"):
            out[k] = ks.get(k)
        out["waits_per_slice"] = ks["nestcl_waits"] / max(1, ks["nestcl_slices"])
        out["launches_per_slice"] = ks["nestcl_launches"] / max(1, ks["nestcl_slices"])
    if a.ee_weights:
        E = g["E_neurons"]
        model = "syn_ex" if a.static_ee else "stdp_pl_synapse_hom_hpc"
        # 20 targets at a time: SynapseCollection.get builds large Python objects (5 GB for 1.8M at once).
        w = np.concatenate([np.ravel(nest.GetConnections(source=E, target=E[i:i + 20], synapse_model=model)
                                     .get("weight")).astype(float) for i in range(0, min(200, len(E)), 20)])
        if w.size == 0:
            sys.exit("error: no E->E connections (%s) found" % model)
        hist, edges = np.histogram(w, bins=40, range=(w.min(), w.max()))
        out.update({"ee_weight_mean": float(w.mean()), "ee_weight_sd": float(w.std()), "ee_weight_n": int(w.size),
                    "ee_weight_hist": hist.tolist(), "ee_weight_edges": edges.tolist()})
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
