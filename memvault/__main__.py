"""Entry point of the `memvault` command and of `python -m memvault`.

`memvault search …` is the command people run most, and `memvault mcp` (stdio) the one agents wait for at every
session start, so plain command lines of the two are served by memvault.cli.fast without building the Typer app
(~100-150 ms saved per call); everything else, and any command line fast.py does not fully understand, goes to
memvault.cli.app unchanged.

Every command's start-up and end: the collector stays off while the Typer app and the command's module are
imported (memvault.cli.app turns it on, over a frozen heap, when the command runs), and a command that only reads
(`memvault.cli.app.ends_plainly`: --help, stats, timeline, show …) ends like a search, without the interpreter's
tear-down (~8 ms of ~70 for `stats`, bench/startup.py).

Standard output is written through `_Stdout`, whose errors name it: an OSError of a write names no file, and the
error guards (memvault.cli.common.guard, fast.try_search, main below) took `memvault stats > /dev/full` for a
full .memvault/ folder. They say `cannot write standard output: …` now (memvault.errors.unwritable_stdout).
"""

import errno
import gc
import io
import os
import sys


def main() -> None:
    # A search's imports and ranking allocate many small objects that live until the process ends: the cyclic
    # collector ran several times per search for nothing (~4 ms). On again for every other command.
    gc.disable()
    name_stdout()
    from memvault.cli.fast import try_mcp, try_search

    code = try_search(sys.argv[1:])
    if code is not None:
        leave(code)
    code = try_mcp(sys.argv[1:])  # turns the collector on itself: a server lives long
    if code is not None:
        sys.exit(code)
    from memvault.cli.app import app, ends_plainly

    try:
        app(prog_name="memvault")
    except SystemExit as exc:
        if ends_plainly(exc.code):
            leave(exc.code or 0)
        raise
    except OSError as exc:
        # Only what Typer itself writes gets here (--help, a usage message): a command's own errors are handled
        # by memvault.cli.common. `memvault --help > /dev/full` gets one line, not a traceback.
        if exc.errno == errno.EPIPE:
            leave(0)
        from memvault.errors import MemvaultError, unwritable_stdout

        found = unwritable_stdout(exc) or MemvaultError(f"cannot write the help: {exc.strerror or exc}")
        sys.stderr.write(f"memvault: {found.message}\n")
        leave(found.exit_code)


class _Stdout(io.FileIO):
    """File descriptor 1, whose write errors name it (memvault.errors.STDOUT). After one, writes are dropped: the
    error was raised (and reported) once, and what the buffer still holds would raise it again at exit, as a
    traceback (`Exception ignored in: <_io.TextIOWrapper name=1>`)."""

    failed = False

    def write(self, data):
        if self.failed:
            return len(data)
        try:
            return super().write(data)
        except OSError as exc:
            from memvault.errors import STDOUT

            exc.filename = STDOUT
            self.failed = True
            raise


def name_stdout() -> None:
    """Put sys.stdout over `_Stdout`, with the encoding, error handler and buffering Python chose for it.
    Started with it closed (`memvault stats >&-`), what is written goes nowhere, as click.echo does; left as it
    is when it is not a real file (replaced by a caller)."""
    old = sys.stdout
    if old is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # every writer and isatty() keep working
        return
    try:
        fd = old.fileno()
        old.flush()
    except (AttributeError, OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_Stdout(fd, "w", closefd=False)), encoding=old.encoding,
                                  errors=old.errors, newline=None if os.name == "nt" else "\n",
                                  line_buffering=old.line_buffering, write_through=old.write_through)


def leave(code: int) -> None:
    """End a search's process without the interpreter's tear-down: freeing every module and object of a process
    that is about to end cost ~10 ms of a ~80 ms search (bench/search.py). What it wrote is flushed first; the
    index and its files are closed by then (the search's `with Index` block)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # (None: started with that stream closed, `>&-`)
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
