"""Two MPI ranks, each with local_num_threads 1 and nestcl_streams 1 (every VP
a stream VP on the device), against one rank with local_num_threads 2 on the
CPU only: the same Brunel network as test_brunel_streams (same VP count and
seed) must give the same spike trains, spikes from the other rank delivered on
the device included. Each rank then checks that nestcl_gpu_fraction other than
the even split (weighted placement) is refused with two processes. The driver
runs both through mpirun and compares the spikes the ranks wrote. Exit 0 pass,
1 fail, 77 skipped (a NEST built without MPI, -Dwith-mpi=OFF, cannot run two ranks)."""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(mode, out):
    sys.path.insert(0, HERE)
    import nest
    import test_brunel_streams as brunel

    nest.verbosity = nest.VerbosityLevel.WARNING
    if mode == "mpi":
        senders, times = brunel.simulate(1, 1)
        dev = nest.GetKernelStatus("nestcl_time_update")
        if not dev > 0:
            print("FAIL rank %d did not use the device" % nest.Rank())
            sys.exit(1)
        np.savez("%s.%d.npz" % (out, nest.Rank()), senders=senders, times=times)
        # Weighted placement needs one MPI process: refused here, naming the key.
        nest.ResetKernel()
        nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1})
        try:
            nest.SetKernelStatus({"nestcl_gpu_fraction": 0.8})
            print("FAIL rank %d: nestcl_gpu_fraction 0.8 was accepted with 2 MPI processes" % nest.Rank())
            sys.exit(1)
        except Exception as e:
            if "nestcl_gpu_fraction" not in str(e) or "single MPI process" not in str(e):
                print("FAIL rank %d: the refusal does not say why: %s" % (nest.Rank(), e))
                sys.exit(1)
    else:
        senders, times = brunel.simulate(2, 0)
        np.savez("%s.0.npz" % out, senders=senders, times=times)


def load(prefix, n):
    parts = [np.load("%s.%d.npz" % (prefix, r)) for r in range(n)]
    s = np.concatenate([p["senders"] for p in parts])
    t = np.concatenate([p["times"] for p in parts])
    order = np.lexsort((s, t))
    return s[order], t[order]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return 0
    probe = subprocess.run([sys.executable, "-c", "import nest; print(nest.build_info['have_mpi'])"],
                           capture_output=True, text=True, env=dict(os.environ, PYNEST_QUIET="1"))
    if probe.returncode != 0 or probe.stdout.strip().splitlines()[-1:] != ["True"]:
        print("skipped: this NEST was built without MPI (configure it with -Dwith-mpi=ON to run two ranks)")
        return 77
    mpirun = ["mpirun", "-n", "2", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    with tempfile.TemporaryDirectory() as d:
        me = [sys.executable, os.path.abspath(__file__), "--worker"]
        subprocess.run(mpirun + me + ["mpi", d + "/mpi"], check=True)
        subprocess.run(me + ["single", d + "/single"], check=True)
        a = load(d + "/mpi", 2)
        b = load(d + "/single", 1)
    same = np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    print("2 ranks x 1 stream: %d spikes; 1 rank x 2 CPU threads: %d spikes: %s"
          % (a[0].size, b[0].size, "identical" if same else "DIFFERENT"))
    ok = same and b[0].size > 0
    print("%d passed, %d failed" % (int(ok), int(not ok)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
