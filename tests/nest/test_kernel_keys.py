"""nestcl's kernel status keys in a patched NEST (PyNEST): defaults, read-only
keys, bad values refused with NEST's error naming the key, and nothing of the
network lost after a refusal. Exit 0 pass, 1 fail."""
import sys

import nest

failures = []


def expect_error(params, key, fragment=None):
    try:
        nest.SetKernelStatus(params)
    except Exception as e:  # PyNEST raises its NESTError subclasses
        text = str(e)
        if key not in text or (fragment and fragment not in text):
            failures.append("%r: error does not name %s%s: %s" % (params, key, " / " + fragment if fragment else "", text))
        else:
            print("refused %r: %s" % (params, text.splitlines()[0][:160]))
        return
    failures.append("%r was accepted" % (params,))


nest.verbosity = nest.VerbosityLevel.WARNING
nest.ResetKernel()
st = nest.GetKernelStatus()
for key, want in [("nestcl_streams", 0), ("nestcl_gpu_fraction", 0.0), ("nestcl_device", "")]:
    if st.get(key) != want:
        failures.append("default %s is %r, not %r" % (key, st.get(key), want))
for key in ["nestcl_device_name", "nestcl_device_bytes", "nestcl_translated_models", "nestcl_time_update"]:
    if key not in st:
        failures.append("kernel status lacks %s" % key)
models = list(st.get("nestcl_translated_models", []))
for m in ["iaf_psc_alpha", "iaf_psc_exp", "iaf_psc_delta", "izhikevich", "gif_psc_exp", "mat2_psc_exp"]:
    if m not in models:
        failures.append("%s is not among nestcl_translated_models %s" % (m, models))
print("device: %s; %d translated models" % (st.get("nestcl_device_name"), len(models)))

nest.SetKernelStatus({"local_num_threads": 2})
expect_error({"nestcl_streams": -1}, "nestcl_streams")
expect_error({"nestcl_streams": 3}, "nestcl_streams")
expect_error({"nestcl_gpu_fraction": 1.5}, "nestcl_gpu_fraction")
expect_error({"nestcl_gpu_fraction": "half"}, "nestcl_gpu_fraction")
expect_error({"nestcl_device": "nosuchplatform:7"}, "nestcl_device")
nest.SetKernelStatus({"nestcl_streams": 1, "nestcl_gpu_fraction": "auto"})
if nest.GetKernelStatus("nestcl_streams") != 1 or nest.GetKernelStatus("nestcl_gpu_fraction") != 0.5:
    failures.append("nestcl_streams 1 of 2 threads should read back 1 and a fraction of 0.5")
n = nest.Create("iaf_psc_alpha", 10)
expect_error({"nestcl_streams": 2}, "nestcl_streams", "nodes exist")
nest.SetKernelStatus({"nestcl_streams": 1})  # unchanged: fine
nest.Simulate(10.0)
if nest.GetKernelStatus("network_size") != 10 or nest.GetKernelStatus("nestcl_time_update") <= 0:
    failures.append("after the refusals the network should still simulate on the device")
# An untranslated model on the stream VP is refused with a clear message.
nest.ResetKernel()
nest.SetKernelStatus({"local_num_threads": 2, "nestcl_streams": 1})
nest.Create("aeif_cond_alpha", 2)
try:
    nest.Simulate(1.0)
    failures.append("an untranslated model on a stream VP was simulated")
except Exception as e:
    if "aeif_cond_alpha" not in str(e) or "did not translate" not in str(e):
        failures.append("the error for an untranslated model does not say why: %s" % e)
    else:
        print("refused an untranslated model on the stream VP: %s" % str(e).splitlines()[0][:160])

for f in failures:
    print("FAIL " + f)
print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
