"""The ``bloomskip`` command line: one parser, one module per command.

bloomskip demo                       point lookups on a 20M-row lake, three ways (Spark)
bloomskip size --ndv 1e6 --fpp 0.01  filter size under both sizing policies
bloomskip hash --type int32 42       the xxHash64 a Parquet filter stores for a value
bloomskip inspect FILE               the bloom filters of a Parquet/ORC file or Lance dataset
bloomskip probe FILE -c COL VALUE..  ask each row group's bloom filter for values
bloomskip prune FILE --where SQL     the row groups that may hold matching rows
bloomskip add-bloom SRC [DST] -c C   add bloom filters without rewriting the data
bloomskip index build|refresh|query|status|vacuum   a zone index over a whole lake

Each command module (:mod:`.demo`, :mod:`.size`, ...) has ``register(subparsers)``, which
adds its parser (:func:`.common.command`, with the arguments several commands share from
:mod:`.options`) with ``func=`` the function that runs it: parse, call the library, print
the result's text or ``--json``. Values are checked by the ``type=`` functions of
:mod:`.args` before anything runs. :func:`main` turns every error into one line on
stderr: usage errors and :class:`~bloomskip.errors.BloomskipError`/``OSError`` exit 2,
Ctrl-C exits 130 (``bloomskip: interrupted``), SIGTERM or SIGHUP while a file is written
exits 128 + the signal (``bloomskip: interrupted by SIGTERM``; see
:mod:`bloomskip.replace`), a closed stdout pipe exits 141 quietly.
"""

from __future__ import annotations

import argparse
import signal
import sys

from bloomskip.cli import add_bloom, demo, hash, index, inspect, probe, prune, size
from bloomskip.cli.common import (
    PROG,
    CommandListFormatter,
    Parser,
    StdoutClosed,
    kernels_cached,
    one_line,
    say_error,
    silence_stdout,
)
from bloomskip.errors import BloomskipError

#: The commands, in the order ``bloomskip --help`` lists them.
COMMANDS = (demo, size, hash, inspect, probe, prune, add_bloom, index)
#: Commands that run compiled kernels: on a machine with none cached yet, numba compiles
#: them first, silently for seconds; stderr (a terminal) says so.
COMPILES = frozenset({"demo", "probe", "prune", "add-bloom", "index"})

DESCRIPTION = """\
Bloom filters that make point lookups on data lakes fast: Parquet's Split Block Bloom
Filter, bit-exact with parquet-java, arrow-rs, Arrow C++ and DuckDB; pruning of Parquet
and ORC row groups; filters added to existing files; a zone index over a whole lake."""

EPILOG = """\
examples:
  bloomskip inspect events.parquet
  bloomskip prune events.parquet --where "user_id = 'u_42'"
  bloomskip index build lake/ lake.idx -c user_id
  bloomskip index query lake.idx "user_id = 'u_42'"

Run 'bloomskip COMMAND --help' for what a command answers, its options and examples."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=CommandListFormatter
    )
    from bloomskip import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit code (0, 2 for bad input, 130 on Ctrl-C, 128 + N on
    signal N while writing a file)."""
    try:
        args = build_parser().parse_args(argv)
        if args.command in COMPILES and sys.stderr.isatty() and not kernels_cached():
            say_error(f"{PROG}: compiling its kernels for this machine (first run only: 10-30 s)")
        return int(args.func(args))
    except SystemExit as e:  # --help (0), or a usage error already said in one line (2)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except KeyboardInterrupt as e:  # Ctrl-C, or Interrupted (a signal while writing a file)
        signum = getattr(e, "signum", signal.SIGINT)
        if signum == signal.SIGINT:
            say_error(f"{PROG}: interrupted")
        else:
            say_error(f"{PROG}: {e}")
        return 128 + signum
    except StdoutClosed:
        silence_stdout()
        return 141
    except (BloomskipError, OSError, KeyError) as e:
        text = one_line(e)
        say_error(f"{PROG}: error: {text if len(text) <= 2000 else text[:2000] + ' ...'}")
        return 2
    except MemoryError:  # numpy's is a subclass; what was asked for is beyond this machine
        say_error(f"{PROG}: error: out of memory (a damaged or outsized index or file?)")
        return 2


def run() -> None:
    """The ``bloomskip`` executable: :func:`main`, then an exit that skips the
    interpreter's teardown once every output is flushed. pyarrow's C++ thread pools can
    abort a finished process at teardown ("terminate called without an active
    exception", exit -6, apache/arrow#34314): a command that did its work must not then
    report a failure. Nothing of bloomskip's needs teardown: files are written, renamed
    and cleaned up before :func:`main` returns."""
    import logging
    import os
    import sys

    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            code = code or 141
    logging.shutdown()
    os._exit(code)


__all__ = ["COMMANDS", "build_parser", "main", "run"]
