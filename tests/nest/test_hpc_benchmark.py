"""NEST's own hpc_benchmark.py (plastic, and with static E->E) at scale 0.2 on
local_num_threads 2: unpatched NEST (NEST_INSTALL_DIR, when given) against the
patched one with nestcl_streams 0, 1 and 2, run one after the other in this
session. Requires: nestcl_streams 0 gives unpatched NEST's spike trains
exactly; 1 and 2 give a rate and CV of ISI within 25 % of it (the device sums
input in fixed point, so trains may part); prints the simulation times side by
side. Usage: test_hpc_benchmark.py HPC_BENCHMARK_PY PATCHED_SITE [UNPATCHED_SITE]
Exit 0 pass, 1 fail."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(site, script, streams, static, out):
    env = dict(os.environ, PYTHONPATH=site)
    cmd = [sys.executable, os.path.join(HERE, "hpc_benchmark_run.py"), "--script", script, "--threads", "2",
           "--scale", "0.2", "--streams", str(streams), "--out-dir", out] + (["--static-ee"] if static else [])
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError("hpc_benchmark_run.py failed (exit %d)" % p.returncode)


def main():
    script, patched = sys.argv[1], sys.argv[2]
    unpatched = sys.argv[3] if len(sys.argv) > 3 else None
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for static in (False, True):
            label = "static E->E" if static else "plastic (stdp_pl_synapse_hom_hpc)"
            rows = []
            if unpatched:
                rows.append(("unpatched NEST", run(unpatched, script, -1, static, d + "/u")))
            for g in (0, 1, 2):
                rows.append(("nestcl_streams %d" % g, run(patched, script, g, static, d + "/p%d" % g)))
            print("hpc_benchmark scale 0.2, 2 threads, %s:" % label)
            for name, r in rows:
                print("  %-17s %6d spikes  %5.1f Hz  CV %.2f  presim %.2f s  sim %.2f s  device update %s  %s"
                      % (name, r["spikes"], r["rate_hz"], r["cv_isi"] or 0, r["presim_time_s"], r["sim_time_s"],
                         "-" if r["nestcl_time_update_s"] is None else "%.2f s" % r["nestcl_time_update_s"],
                         r["spike_sha256"][:12]))
            base = dict(rows)["nestcl_streams 0"]
            if unpatched and dict(rows)["unpatched NEST"]["spike_sha256"] != base["spike_sha256"]:
                failures.append("%s: nestcl_streams 0 differs from unpatched NEST" % label)
            for g in (1, 2):
                r = dict(rows)["nestcl_streams %d" % g]
                for key in ("rate_hz", "cv_isi"):
                    if not abs(r[key] - base[key]) <= 0.25 * base[key]:
                        failures.append("%s, nestcl_streams %d: %s %.3f vs %.3f" % (label, g, key, r[key], base[key]))
    if not unpatched:
        print("note: NEST_INSTALL_DIR unset, so no comparison with unpatched NEST")
    for f in failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
