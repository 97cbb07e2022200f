"""Runs NEST's own cortical microcircuit example (pynest/examples/Potjans_2014,
part of NEST up to 3.8: give its folder as --example) unchanged but for what a
user edits in its dictionaries: sim_dict's threads, presimulation and
simulation times, output folder and progress printing; net_dict's N_scaling
and K_scaling (--scale); and, on a patched NEST, nestcl's kernel keys, set
right after the example's own kernel setup (--streams, --keys JSON).
Prints one JSON line: the example's own phases (create, connect, presimulate,
simulate), the real-time factor of the simulation (NEST's time_simulate: the
run of the last Simulate, without its Prepare and Cleanup; the whole call's
beside it), the spikes its recorders wrote and the mean rate, and nestcl's
figures (the last Run's path and why, Prepare and device times, launches,
waits and slices)."""
import argparse
import glob
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True, help="the Potjans_2014 folder")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--streams", type=int, default=-1, help="nestcl_streams; -1: unpatched NEST, no key set")
    ap.add_argument("--keys", default="{}", help="more kernel keys (JSON), set with the streams")
    ap.add_argument("--scale", type=float, default=0.1, help="N_scaling and K_scaling")
    ap.add_argument("--presim", type=float, default=500.0)
    ap.add_argument("--simtime", type=float, default=1000.0)
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()
    if not 0 < a.scale <= 1:
        ap.error("--scale must lie in (0, 1]")
    sys.path.insert(0, os.path.abspath(a.example))
    import nest
    import network

    # The example resets and sets up the kernel in Network.__setup_nest (PyNEST's module takes no new
    # attributes, so nest.ResetKernel itself cannot be wrapped): the keys go right after it, before any node.
    setup = network.Network._Network__setup_nest

    def setup_with_keys(self):
        setup(self)
        if a.streams >= 0:
            nest.SetKernelStatus({"local_num_threads": a.threads, "nestcl_streams": a.streams})
            nest.SetKernelStatus(json.loads(a.keys))

    network.Network._Network__setup_nest = setup_with_keys
    from network_params import net_dict
    from sim_params import sim_dict
    from stimulus_params import stim_dict

    sim_dict.update({"t_presim": a.presim, "t_sim": a.simtime, "local_num_threads": a.threads,
                     "data_path": os.path.join(os.path.abspath(a.out_dir), ""), "print_time": False,
                     "overwrite_files": True})
    net_dict.update({"N_scaling": a.scale, "K_scaling": a.scale})
    t = [time.time()]
    net = network.Network(sim_dict, net_dict, stim_dict)
    net.create()
    t.append(time.time())
    net.connect()
    t.append(time.time())
    net.simulate(a.presim)
    t.append(time.time())
    net.simulate(a.simtime)
    t.append(time.time())
    spikes, in_window = 0, 0
    for f in glob.glob(os.path.join(a.out_dir, "spike_recorder*.dat")):
        for line in open(f):
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit():
                spikes += 1
                in_window += float(parts[1]) >= a.presim
    neurons = sum(int(round(n * a.scale)) for n in net_dict["full_num_neurons"])
    # NEST's own time_simulate is the last Simulate's run alone (its Prepare and Cleanup, where nestcl packs,
    # exports and reads back, are apart): the real-time factor is NEST's; the wall time of the call beside it.
    run_s = nest.GetKernelStatus("time_simulate")
    out = {"threads": a.threads, "streams": a.streams, "keys": json.loads(a.keys), "scale": a.scale,
           "neurons": neurons, "time_create_s": t[1] - t[0], "time_connect_s": t[2] - t[1],
           "time_presimulate_s": t[3] - t[2], "time_simulate_s": run_s, "time_simulate_call_s": t[4] - t[3],
           "real_time_factor": run_s / (a.simtime / 1000.0),
           "real_time_factor_call": (t[4] - t[3]) / (a.simtime / 1000.0), "spikes": spikes,
           "rate_hz": in_window / max(neurons, 1) / (a.simtime / 1000.0)}
    if a.streams >= 0:
        ks = nest.GetKernelStatus()
        for k in ("nestcl_simulate_path", "nestcl_simulate_path_reason", "nestcl_time_prepare", "nestcl_time_update",
                  "nestcl_time_stage", "nestcl_time_emit", "nestcl_time_deliver", "nestcl_launches", "nestcl_waits",
                  "nestcl_slices", "nestcl_device_synapses", "nestcl_device_generators", "nestcl_device_name"):
            out[k] = ks.get(k)
        out["waits_per_slice"] = ks["nestcl_waits"] / max(1, ks["nestcl_slices"])
        out["launches_per_slice"] = ks["nestcl_launches"] / max(1, ks["nestcl_slices"])
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
