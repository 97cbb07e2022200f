"""pytest plugin for run_nest_testsuite: writes each test's outcome as it ends.

One line per event to the file named by NESTCL_RESULTS, flushed at once, so
that a process that dies (a crash, a timeout) leaves what it did: "collected
<nodeid>" for every test pytest selected, then "<outcome> <nodeid> <message>"
for each test that ended (passed, failed, error, skipped, xfailed, xpassed;
the message is the first line of the failure or skip reason), and
"collect-error <path> <message>" for a file that could not be collected.
Under mpirun (NEST's mpi_direct tests) rank r > 0 writes to that file's name
with ".rank<r>" appended, so that the ranks' lines do not mix.
"""
import os

_out = None


def _write(*fields):
    line = "\t".join(f.replace("\t", " ").replace("\n", " ") for f in fields)
    _out.write(line + "\n")
    _out.flush()


def _first_line(report):
    text = str(report.longrepr) if report.longrepr is not None else ""
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        text = report.longrepr[2]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # the assertion or exception line of a failure (pytest marks it with "E   ") if there is one
    errs = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    return (errs[0] if errs else lines[-1] if lines else "")[:300]


def pytest_configure(config):
    global _out
    path = os.environ.get("NESTCL_RESULTS")
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
    if path:
        _out = open(path + (".rank%d" % rank if rank else ""), "a")


def pytest_collection_finish(session):
    if _out:
        for item in session.items:
            _write("collected", item.nodeid)


def pytest_collectreport(report):
    if _out and report.failed:
        _write("collect-error", report.nodeid, _first_line(report))


def pytest_runtest_logreport(report):
    if not _out:
        return
    xfail = hasattr(report, "wasxfail")
    if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed):
        if report.passed:
            outcome = "xpassed" if xfail else "passed"
        elif report.skipped:
            outcome = "xfailed" if xfail else "skipped"
        else:
            outcome = "failed" if report.when == "call" else "error"
        _write(outcome, report.nodeid, "" if report.passed else _first_line(report))
