"""nestcl_gpu_fraction "auto" in a patched NEST (PyNEST), issue 10 Deliver 5.

With one CPU thread and one stream VP:
  1. no performance profile of the device: the even split, and the kernel
     status says why (nestcl_gpu_fraction_source); after Simulate the run's
     wall time per simulated second is reported (nestcl_measured_wall);
  2. a profile (fitted by `nestcl perfmodel fit` to a sweep generated from
     known parameters for this device, its device costs per super step then
     cut 100-fold so that the stream is worth a share of these few neurons):
     the first Create is placed with the
     share that `nestcl perfmodel predict --neurons n --synapse static` gives
     for the same profile, the neurons on the stream VP are that share, the
     spike trains equal the even split's (the network draws nothing in NEST,
     so its trains do not depend on the placement), and after Simulate the
     model's recommendation for the network as it ran is in [0, 1];
  3. a corrupt profile: the even split again, the reason given;
  4. a share set by hand: kept, with the recommendation still made.

Needs NESTCL_BIN_DIR (the nestcl build's bin folder: nestcl and
test_perfmodel_model); scripts/nest-check sets it. Exit 0 pass, 1 fail.
"""
import json
import os
import subprocess
import sys
import tempfile

bindir = os.environ.get("NESTCL_BIN_DIR")
if not bindir or not os.path.exists(os.path.join(bindir, "test_perfmodel_model")):
    print("error: NESTCL_BIN_DIR must name the nestcl build's bin folder (with nestcl and test_perfmodel_model)")
    sys.exit(1)
work = tempfile.mkdtemp(prefix="nestcl-auto-")
os.environ["NESTCL_CACHE_DIR"] = os.path.join(work, "cache")  # read by the manager when it looks for the profile

import numpy as np  # noqa: E402

import nest  # noqa: E402

N = 600
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# A network whose spike trains do not depend on the placement: no random draws
# by NEST (explicit connections, constant drive drawn here, no poisson_generator)
# and integer weights, which the device's fixed-point ring sums exactly.
rng = np.random.default_rng(11)
I_E = rng.uniform(360.0, 420.0, N)
V_0 = rng.uniform(-70.0, -56.0, N)
SRC = rng.integers(0, N, 40 * N)
TGT = np.repeat(np.arange(N), 40)
W = np.where(SRC < 0.8 * N, 30.0, -120.0)


def run(params):
    nest.ResetKernel()
    nest.verbosity = nest.VerbosityLevel.ERROR
    nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1, **params})
    pop = nest.Create("iaf_psc_alpha", N)
    after_create = nest.GetKernelStatus(["nestcl_gpu_fraction", "nestcl_gpu_fraction_source", "nestcl_predicted_wall"])
    pop.set(I_e=I_E.tolist(), V_m=V_0.tolist())
    sr = nest.Create("spike_recorder")
    ids = np.array(pop.tolist())
    nest.Connect(ids[SRC], ids[TGT], "one_to_one", {"weight": W, "delay": np.full(len(W), 1.5)})
    nest.Connect(pop, sr)
    nest.Simulate(200.0)
    ev = sr.get("events")
    spikes = sorted(zip(ev["senders"].tolist(), ev["times"].tolist()))
    on_stream = sum(1 for v in pop.get("vp") if v == 1)
    st = nest.GetKernelStatus(["nestcl_measured_wall", "nestcl_recommended_gpu_fraction", "nestcl_recommended_wall"])
    return after_create, spikes, on_stream, tuple(st)


# 1. No profile.
(frac, source, pred), even_spikes, on_stream, st = run({"nestcl_gpu_fraction": "auto"})
print("no profile: fraction %g (%s); measured %.3f s per simulated s" % (frac, source, st[0]))
check(frac == 0.5 and on_stream == N // 2, "no profile: fraction %r, %d of %d neurons on the stream" % (frac, on_stream, N))
check(source.startswith("even split: no performance profile"), "no profile: source %r" % source)
check(pred == -1.0, "no profile: a predicted wall time %r" % pred)
check(st[0] > 0 and st[1] == -1.0, "no profile: measured %r, recommended %r" % (st[0], st[1]))
check(len(even_spikes) > N, "the network should spike (%d spikes)" % len(even_spikes))

# 2. A profile of this device (fitted to a generated sweep), in the cache folder.
env = dict(os.environ)
sweep = os.path.join(work, "synthetic.jsonl")
subprocess.run([os.path.join(bindir, "test_perfmodel_model"), "--write-sweep", sweep], check=True, env=env)
subprocess.run([os.path.join(bindir, "nestcl"), "perfmodel", "fit", sweep, "--out", os.path.join(work, "fit.json")],
               check=True, env=env, stderr=subprocess.DEVNULL)
# Its device costs per super step cut 100-fold, so that the model gives the stream a share of these few neurons.
prof = [os.path.join(d, f) for d, _, fs in os.walk(os.environ["NESTCL_CACHE_DIR"]) for f in fs if f.endswith(".json")]
check(len(prof) == 1, "one profile in the cache, not %r" % prof)
with open(prof[0]) as f:
    doc = json.load(f)
for k in ("g_step", "g_launch", "g_dlaunch", "g_spike"):
    doc["parameters"][k]["value"] *= 0.01
with open(prof[0], "w") as f:
    json.dump(doc, f)
out = subprocess.run([os.path.join(bindir, "nestcl"), "perfmodel", "predict", "--neurons", str(N), "--threads", "1",
                      "--streams", "1", "--synapse", "static"], check=True, env=env, capture_output=True, text=True)
want = json.loads(out.stdout)["prediction"]
(frac, source, pred), spikes, on_stream, st = run({"nestcl_gpu_fraction": "auto"})
print("profile: fraction %.4f (predict says %.4f), %d neurons on the stream; %s" %
      (frac, want["gpu_fraction"], on_stream, source))
print("         measured %.3f s per simulated s; recommended %.4f (%.3f s)" % st)
check(source.startswith("performance profile "), "profile: source %r" % source)
check(abs(frac - want["gpu_fraction"]) < 1e-9, "profile: fraction %r, predict %r" % (frac, want["gpu_fraction"]))
check(abs(pred - want["wall_s_per_s"]) < 1e-9 * want["wall_s_per_s"], "profile: predicted %r, predict %r" %
      (pred, want["wall_s_per_s"]))
check(0.05 < frac < 0.95 and abs(on_stream - frac * N) <= 1.0,
      "profile: %d neurons on the stream for a share of %g" % (on_stream, frac))
check(spikes == even_spikes, "profile: the spike trains differ from the even split's (%d and %d spikes)" %
      (len(spikes), len(even_spikes)))
check(st[0] > 0 and 0.0 <= st[1] <= 1.0 and st[2] > 0, "profile: measured %r, recommended %r at %r" % st)

# 4. A share set by hand is kept; the recommendation is still made.
(frac, source, pred), spikes, on_stream, st = run({"nestcl_gpu_fraction": 0.8})
check(frac == 0.8 and source == "nestcl_gpu_fraction" and on_stream == int(0.8 * N),
      "by hand: fraction %r (%s), %d on the stream" % (frac, source, on_stream))
check(spikes == even_spikes, "by hand: the spike trains differ from the even split's")
check(0.0 <= st[1] <= 1.0, "by hand: recommended %r" % st[1])

# 3. A corrupt profile: the even split, saying why.
with open(prof[0], "r+") as f:
    text = f.read()
    f.seek(0)
    f.truncate()
    f.write(text[: len(text) // 2])
(frac, source, pred), spikes, on_stream, st = run({"nestcl_gpu_fraction": "auto"})
print("corrupt profile: fraction %g; %s" % (frac, source))
check(frac == 0.5 and "corrupt" in source, "corrupt profile: fraction %r, source %r" % (frac, source))
check(spikes == even_spikes, "corrupt profile: the spike trains differ")

for f in failures:
    print("FAIL", f)
print("test_gpu_fraction_auto: %s" % ("FAILED" if failures else "passed"))
sys.exit(1 if failures else 0)
