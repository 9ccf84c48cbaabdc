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
  stdout was closed early (``plan | head``), 130 if interrupted (Ctrl-C). Files the CLI writes
  are closed by their ``with`` blocks before ``main`` returns.
* A reader that closes stdout early (``| head``) ends the command quietly, as the Python docs
  advise (signal module, "Note on SIGPIPE"): the BrokenPipeError is caught here, stdout is
  pointed at /dev/null so nothing else fails on it, and the status is 141, the 128 + SIGPIPE a
  shell reports for a C tool stopped by the same pipe (SIGPIPE itself stays ignored: a closed
  socket must not kill the process).
* Output that cannot be written for another reason (``plan --json > /dev/full``: a full disk)
  is reported in one line naming the error, status 2, as a manifest ``--out`` cannot write.
* Ctrl-C (SIGINT), from the first import on, ends the command with one line and status 130, the
  128 + SIGINT a shell reports.

An unexpected exception is left to the interpreter: it prints the traceback and exits 1 the
ordinary way (slow, but only on a bug).
"""

import atexit
import gc
import os
import signal
import sys

gc.disable()

# What a shell reports for a process a closed pipe stopped: 128 + SIGPIPE.
EXIT_BROKEN_PIPE = 128 + 13
# ... and for one Ctrl-C stopped: 128 + SIGINT.
EXIT_INTERRUPTED = 128 + 2
EXIT_USAGE = 2  # components.cli.EXIT_USAGE: nothing of the CLI is imported before `run`


class OutputFailed(Exception):
    """Standard output could not be written (not a closed pipe: a full disk, an I/O error)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class GuardedOutput:
    """Standard output that raises OutputFailed when a write fails (BrokenPipeError stays
    itself: a reader that left early is not an error); anything else is the stream's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


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


def output_failed(exc: OutputFailed) -> int:
    """Standard output cannot take the output: say so in one line, as a user mistake (the
    place it points at), and send what is left to /dev/null so the final flush succeeds."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), "components")
    print(
        f"error: {command}: cannot write the output to standard output: {exc.error}",
        file=sys.stderr,
    )
    closed_stdout()
    return EXIT_USAGE


def interrupted() -> int:
    print("error: interrupted (Ctrl-C)", file=sys.stderr)
    return EXIT_INTERRUPTED


def finish(code: object) -> None:
    """Run exit callbacks, flush the output, and end the process without teardown."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # leaving already: a late Ctrl-C is moot
    status = exit_status(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            status = closed_stdout() if stream is sys.stdout else status
        except OutputFailed as exc:
            status = output_failed(exc)
        except (OSError, ValueError):  # stderr closed or full: nowhere left to say so
            pass
    os._exit(status)


def console() -> None:
    """The CLI, then the fast exit: ``python -m components`` and the ``tpu-pathways`` console
    script (pyproject.toml's [project.scripts]) both end here."""
    finish(run())


def run() -> object:
    """The command's result (an exit status or sys.exit's argument); the CLI is imported
    here, so a Ctrl-C during its imports is one line too."""
    sys.stdout = GuardedOutput(sys.stdout)
    try:
        from components.cli.main import main

        return main()
    except SystemExit as exc:  # argparse (--help, usage errors) and explicit sys.exit
        return exc.code
    except BrokenPipeError:
        return closed_stdout()
    except OutputFailed as exc:
        return output_failed(exc)
    except KeyboardInterrupt:
        return interrupted()


if __name__ == "__main__":
    console()
