"""A loop of short Simulate calls against one long one, on NEST's own
hpc_benchmark.py network (issue 47: "a loop of Simulate calls costs what one
call costs"). Builds the network with the script (through
hpc_benchmark_run.py's parameters: threads, scale, streams, kernel keys; a
--presim ms of presimulation, --static-ee for static E->E synapses), then,
--rounds times, in the order one, loop, loop, one (so that a network whose
activity drifts weighs on both alike): Simulate(T) once, and K calls of
Simulate(T / K); each timed in wall seconds around the calls. Prints one JSON
line: each round's ratio (loop / one, from its two of each), their median,
and nestcl's traffic between the calls (nestcl_resident: what was built, sent
or read back, which must be nothing for the loop). Run it once with
--streams -1 (NEST alone) and once with the stream VPs, in one session."""
import argparse
import json
import os
import re
import statistics
import sys
import time

from hpc_benchmark_run import set_params  # the script's parameters, set as that runner sets them


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True, help="NEST's pynest/examples/hpc_benchmark.py")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--streams", type=int, default=-1, help="nestcl_streams; -1: NEST alone, no key set")
    ap.add_argument("--scale", type=float, default=0.2)
    ap.add_argument("--total", type=float, default=50.0, help="T: ms simulated by each way")
    ap.add_argument("--calls", type=int, default=50, help="K: calls of the loop")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--presim", type=float, default=50.0, help="ms simulated by the script before the rounds")
    ap.add_argument("--static-ee", action="store_true", help="static E->E synapses (syn_ex) instead of STDP")
    ap.add_argument("--keys", default="{}", help="more kernel keys (JSON), set with the streams")
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()
    if a.calls < 1 or a.rounds < 1 or not a.total > 0:
        ap.error("--calls and --rounds must be >= 1 and --total > 0")
    os.makedirs(a.out_dir, exist_ok=True)
    text = open(a.script).read()
    subs = {"num_threads": str(a.threads), "scale": repr(a.scale), "simtime": "1.0", "presimtime": repr(a.presim),
            "path_name": repr(a.out_dir), "log_file": repr(os.path.join(a.out_dir, "log"))}
    text = set_params(text, subs, a.static_ee)
    if a.streams >= 0:
        keys = dict({"local_num_threads": a.threads, "nestcl_streams": a.streams}, **json.loads(a.keys))
        text, n = re.subn(r"nest\.ResetKernel\(\)", "nest.ResetKernel(); nest.SetKernelStatus(%r)" % keys, text)
        if n != 1:
            sys.exit("error: hpc_benchmark.py calls ResetKernel %d times, not once" % n)
    import nest

    exec(compile(text, a.script, "exec"), {"__name__": "__main__", "__file__": a.script})
    def timed(calls):
        t0 = time.perf_counter()
        for _ in range(calls):
            nest.Simulate(a.total / calls)
        return time.perf_counter() - t0

    one, loop, ratios = [], [], []
    r0 = nest.GetKernelStatus("nestcl_resident") if a.streams >= 0 else None
    for _ in range(a.rounds):
        o1, l1, l2, o2 = timed(1), timed(a.calls), timed(a.calls), timed(1)
        one += [o1, o2]
        loop += [l1, l2]
        ratios.append((l1 + l2) / (o1 + o2))
    out = {"streams": a.streams, "threads": a.threads, "scale": a.scale, "static_ee": a.static_ee,
           "total_ms": a.total, "calls": a.calls, "one_s": one, "loop_s": loop, "ratios": ratios,
           "ratio": statistics.median(ratios)}
    if a.streams >= 0:
        r1 = nest.GetKernelStatus("nestcl_resident")
        out["traffic_between_calls"] = {k: r1[k] - r0[k] for k in r1 if k != "rebuilt"}
        out["nestcl_simulate_path"] = nest.GetKernelStatus("nestcl_simulate_path")
        out["nestcl_simulate_path_reason"] = nest.GetKernelStatus("nestcl_simulate_path_reason")
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
