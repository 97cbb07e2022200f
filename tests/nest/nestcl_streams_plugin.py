"""pytest plugin for NEST's own test suite (run_nest_testsuite's "forced" run):
every NEST kernel of the session runs with all its threads as nestcl stream VPs.

After every ResetKernel, and whenever a test changes the number of threads
(local_num_threads or total_num_virtual_processes), nestcl_streams is set to
local_num_threads, so that every VP is a stream VP and every translated node
of every test runs on the device. A test that sets nestcl_streams itself keeps
its own value. The plugin wraps PyNEST's two low-level calls
(nestkernel_api.llapi_reset_kernel and llapi_set_kernel_status), through which
ResetKernel, SetKernelStatus and the kernel attributes (nest.local_num_threads
= 4) all pass. With NESTCL_STREAMS_PLUGIN_MIN_WORK=n in the environment it
also sets nestcl_device_min_work to n after every ResetKernel (0: every
translated neuron on the device, however few). Load it with `pytest -p nestcl_streams_plugin` (its folder on
PYTHONPATH); it needs a NEST patched by nest_patch and built with nestcl.
"""
import os

THREAD_KEYS = ("local_num_threads", "total_num_virtual_processes")


def _install():
    from nest import nestkernel_api as api

    set_status = api.llapi_set_kernel_status
    reset = api.llapi_reset_kernel

    min_work = os.environ.get("NESTCL_STREAMS_PLUGIN_MIN_WORK", "")

    def force_streams():
        status = api.llapi_get_kernel_status()
        threads = status["local_num_threads"]
        if status.get("nestcl_streams") != threads:
            set_status({"nestcl_streams": threads})

    def llapi_reset_kernel():
        reset()
        if min_work:
            set_status({"nestcl_device_min_work": int(min_work)})
        force_streams()

    def llapi_set_kernel_status(params):
        set_status(params)
        if isinstance(params, dict) and "nestcl_streams" not in params and any(k in params for k in THREAD_KEYS):
            force_streams()

    if "nestcl_streams" not in api.llapi_get_kernel_status():
        raise RuntimeError("nestcl_streams_plugin: this NEST has no nestcl_streams (not patched by nest_patch)")
    api.llapi_reset_kernel = llapi_reset_kernel
    api.llapi_set_kernel_status = llapi_set_kernel_status
    if min_work:
        set_status({"nestcl_device_min_work": int(min_work)})
    force_streams()


def pytest_configure(config):
    _install()
