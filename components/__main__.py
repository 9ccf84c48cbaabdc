"""`python -m components ...` (and the `tpu-pathways` command): a one-shot process that skips
the interpreter's teardown.

Two measures, both only for this entry point (importing ``components.cli.main`` changes neither):

* The cyclic GC is off. The provider SDKs define ~100k classes on import; the collector's
  repeated passes over them cost about a third of a plan's wall time while freeing nothing
  (peak memory is the same without them; see benchmarks/README.md). A plan allocates what it
  needs once and then ends, so nothing is gained by collecting.
* The process ends with ``os._exit`` once the output is flushed. An ordinary exit tears the
  interpreter down: it clears every module and runs a full collection over the same ~100k SDK
  classes and their objects (even with the GC disabled), about 1 s of every plan, with nothing
  left to release that the OS would not reclaim anyway. Before leaving, ``finish`` does what
  the teardown would do for the user: it runs the ``atexit`` callbacks (``weakref.finalize``
  hooks such as temporary-directory cleanup are among them), flushes stdout and stderr, and
  keeps the exit status: 0, 1 (a check failed), 2 (a user mistake, also argparse's), 141 if
  stdout was closed early (``plan | head``), an interpreter-style 120 if the output could not
  be flushed for another reason. Files the CLI writes are closed by their ``with`` blocks
  before ``main`` returns.
* A reader that closes stdout early (``| head``) ends the command quietly, as the Python docs
  advise (signal module, "Note on SIGPIPE"): the BrokenPipeError is caught here, stdout is
  pointed at /dev/null so nothing else fails on it, and the status is 141, the 128 + SIGPIPE a
  shell reports for a C tool stopped by the same pipe (SIGPIPE itself stays ignored: a closed
  socket must not kill the process).

An unexpected exception is left to the interpreter: it prints the traceback and exits 1 the
ordinary way (slow, but only on a bug).
"""

import atexit
import gc
import os
import sys

gc.disable()

from components.cli.main import main  # noqa: E402

# The interpreter's status when flushing stdout/stderr at exit fails (Py_RunMain).
EXIT_FLUSH_FAILED = 120
# What a shell reports for a process a closed pipe stopped: 128 + SIGPIPE.
EXIT_BROKEN_PIPE = 128 + 13


def exit_status(code: object) -> int:
    """The process status for ``sys.exit(code)``, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)  # sys.exit("message"): printed, status 1
    return 1


def closed_stdout() -> int:
    """The reader went away: send the rest of the output to /dev/null (so the final flush
    succeeds) and report it the way a shell would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def finish(code: object) -> None:
    """Run exit callbacks, flush the output, and end the process without teardown."""
    status = exit_status(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            status = closed_stdout() if stream is sys.stdout else EXIT_FLUSH_FAILED
        except (OSError, ValueError):  # a closed stream, a full disk: as the interpreter does
            status = EXIT_FLUSH_FAILED
    os._exit(status)


def run() -> None:
    """The CLI, then the fast exit: ``python -m components`` and the ``tpu-pathways`` console
    script (pyproject.toml's [project.scripts]) both end here."""
    try:
        result: object = main()
    except SystemExit as exc:  # argparse (--help, usage errors) and explicit sys.exit
        result = exc.code
    except BrokenPipeError:
        result = closed_stdout()
    finish(result)


if __name__ == "__main__":
    run()
