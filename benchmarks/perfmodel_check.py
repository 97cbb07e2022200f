#!/usr/bin/env python3
"""The acceptance figures of the performance model (issue 10), measured in one
session with alternated runs and medians (a benchmark, not a test):

  - an 11-point alpha sweep (0, 0.1, ..., 1) of one (scale, threads, streams);
  - `--gpu-fraction auto` (the profile's choice) beside it;
  - `--rebalance` started from alpha 0.05 and 0.95;
  - with --tune SWEEP.jsonl instead: `nestcl perfmodel tune`'s recommendation
    (with --tune-measure K: tune --measure K, which runs the model's K best
    itself) for the scale beside the TOP fastest configurations the sweep
    measured at that scale (medians of its repeats), all measured again here;

every configuration REPEATS times, interleaved round by round so that drift of
the machine hits all alike. Prints one JSON object: per configuration the
alpha used and the median wall time of the measured simulation, and the
ratios of auto's and rebalance's medians to the best of the sweep.

  benchmarks/perfmodel_check.py --nestcl build/bin/nestcl --scale 0.3 \\
      --threads 1 --streams 1 --repeats 3 --out check.json
Extra arguments after -- go to every run (e.g. --profile FILE).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(nestcl, args, tmp):
    out = os.path.join(tmp, "r.json")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([nestcl, "run", "hpc_benchmark", *args, "--quiet", "--record", "0", "--out", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("error: run failed: %s\n%s" % (" ".join(args), p.stderr.strip()))
    with open(out) as f:
        d = json.load(f)
    return d["simulation"]["sim_wall_s"], d["config"]["gpu_fraction"], d["activity"]["spikes"]


def tune_configs(a):
    """The tune recommendation and the sweep's TOP fastest configurations at the scale."""
    cmd = [a.nestcl, "perfmodel", "tune", "--scale", str(a.scale), "--max-streams", "3"]
    if a.tune_measure:
        cmd += ["--measure", str(a.tune_measure), "--repeats", str(a.repeats), "--simtime", str(a.simtime),
                "--presim", str(a.presim)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("error: tune failed: " + p.stderr.strip())
    a.tune_report = json.loads(p.stdout)
    b = a.tune_report["best"]
    rec = ["--threads", str(b["threads"]), "--streams", str(b["streams"]), "--gpu-fraction", "%.4f" % b["gpu_fraction"]]
    runs = {}
    with open(a.tune) as f:
        for line in f:
            r = json.loads(line)
            if r["scale"] != a.scale or r["synapse"] != "stdp" or r["inputs"]["M"] != 1:
                continue
            i = r["inputs"]
            key = (i["TC"], i["TG"], round(i["alpha"], 2))
            runs.setdefault(key, []).append(r["measured"]["t"])
    if not runs:
        sys.exit("error: the sweep has no stdp runs at scale %g" % a.scale)
    top = sorted(runs, key=lambda k: statistics.median(runs[k]))[:a.top]
    cfgs = [("tune", rec)]
    for t, g, al in top:
        cfgs.append(("sweep %dT %dG %.2f" % (t, g, al),
                     ["--threads", str(t), "--streams", str(g), "--gpu-fraction", "%.2f" % al]))
    return cfgs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nestcl", required=True)
    ap.add_argument("--scale", type=float, default=0.3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--simtime", type=float, default=200.0)
    ap.add_argument("--presim", type=float, default=50.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--tune", metavar="SWEEP", help="check tune against the sweep's best configurations")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--tune-measure", type=int, default=0, metavar="K",
                    help="run tune with --measure K (its own short runs choose among the model's K best)")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    if a.repeats < 1 or a.threads < 1 or a.streams < 1 or not a.scale > 0:
        sys.exit("error: --repeats, --threads and --streams must be >= 1 and --scale > 0")
    base = ["--scale", str(a.scale), "--threads", str(a.threads), "--streams", str(a.streams),
            "--simtime", str(a.simtime), "--presim", str(a.presim), *a.extra]
    if a.tune:
        base = ["--scale", str(a.scale), "--simtime", str(a.simtime), "--presim", str(a.presim), *a.extra]
        configs = tune_configs(a)
    else:
        configs = [("alpha %.1f" % (k / 10), ["--gpu-fraction", "%.1f" % (k / 10)]) for k in range(11)]
        configs += [("auto", ["--gpu-fraction", "auto"]),
                    ("rebalance from 0.05", ["--gpu-fraction", "0.05", "--rebalance"]),
                    ("rebalance from 0.95", ["--gpu-fraction", "0.95", "--rebalance"])]
    times = {name: [] for name, _ in configs}
    alphas = {name: [] for name, _ in configs}
    spikes = set()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            for i, (name, extra) in enumerate(configs):
                print("perfmodel_check: round %d/%d, %s" % (r + 1, a.repeats, name), file=sys.stderr)
                t, alpha, n = run(a.nestcl, base + extra, tmp)
                times[name].append(t)
                alphas[name].append(alpha)
                spikes.add(n)
    med = {name: statistics.median(v) for name, v in times.items()}
    sweep = [name for name, _ in configs if name != "tune" and not name.startswith(("auto", "rebalance"))]
    best = min(sweep, key=lambda n: med[n])
    checked = [n for n, _ in configs if n not in sweep]
    res = {
        "schema": "nestcl-perfmodel-check/1",
        "mode": "tune" if a.tune else "alpha",
        "scale": a.scale, "threads": a.threads, "streams": a.streams, "simtime_ms": a.simtime,
        "repeats": a.repeats,
        "identical_spike_counts": len(spikes) == 1,
        "configs": [{"name": n, "flags": f, "alpha": statistics.median(alphas[n]), "alphas": alphas[n],
                     "sim_wall_s": times[n], "median_s": med[n]} for n, f in configs],
        "best_measured": {"name": best, "median_s": med[best]},
        "ratio_to_best": {n: med[n] / med[best] for n in checked},
    }
    if a.tune:
        res["tune"] = {k: a.tune_report.get(k) for k in ("chosen_by", "best", "measured")}
    text = json.dumps(res, indent=2)
    if a.out:
        tmpname = a.out + ".tmp.%d" % os.getpid()
        with open(tmpname, "w") as f:
            f.write(text + "\n")
        os.replace(tmpname, a.out)
    print(text)


if __name__ == "__main__":
    main()
