"""What every command module shares: the parser class, output, one-line errors.

* :class:`Parser` - an ``argparse.ArgumentParser`` whose usage errors are one line,
  ``bloomskip: error: COMMAND: argument X: why (see 'bloomskip COMMAND --help')``, exit 2;
* :func:`command` - the parser of one command or ``index`` action, with its help texts
  and the function that runs it (the arguments several share: :mod:`.options`);
* :func:`emit` / :func:`emit_json` - write a result to stdout; text that the terminal's
  encoding cannot hold (a path with non-UTF-8 bytes) is backslash-escaped, never a
  traceback; :class:`StdoutClosed` when the reader went away (``| head``); :func:`report`
  - a result's ``to_json()`` with ``--json``, else its ``to_text()``;
* :func:`say_error` - one line on stderr;
* :func:`format_options` - the options a file's format takes from the arguments;
* :func:`require_java` - the check before anything starts a JVM.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TextIO

from bloomskip.errors import MissingDependencyError
from bloomskip.formats import FileFormat

PROG = "bloomskip"


class StdoutClosed(Exception):
    """stdout is a pipe whose reader has gone (``bloomskip ... | head``)."""


class CommandListFormatter(argparse.RawDescriptionHelpFormatter):
    """For parsers whose help lists commands: names and what they do on one line each."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        super().__init__(prog, max_help_position=15, **kwargs)
        self._action_max_length = 13  # "    add-bloom": argparse does not count subcommands


class Parser(argparse.ArgumentParser):
    """Usage errors as one line naming the command, with where to read more."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        command = self.prog[len(PROG) :].strip() if self.prog.startswith(PROG) else self.prog
        where = f"{command}: " if command else ""
        hint = ""
        if message.startswith("unrecognized arguments:") and _SQL_WORDS & {
            w.upper() for w in message.split(":", 1)[1].split()
        }:
            hint = "; a predicate is one argument: quote it whole, \"user_id = 'u1'\""
        say_error(f"{PROG}: error: {where}{one_line(message)}{hint} (see '{self.prog} --help')")
        raise SystemExit(2)


#: Words that, left over on a command line, mean a predicate was not quoted.
_SQL_WORDS = frozenset({"=", "!=", "<>", "<", ">", "<=", ">=", "IN", "AND", "OR", "IS", "NOT"})


def command(
    sub: argparse._SubParsersAction,
    name: str,
    run: Callable[[argparse.Namespace], int] | None,
    help: str,
    description: str,
    epilog: str,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """Add the parser of command ``name`` to ``sub``: ``help`` is its line in the parent's
    list, ``description`` and ``epilog`` frame its ``--help``, and parsing it runs ``run``
    (``args.func``; None for a command whose actions each have their own). ``kwargs`` go
    to ``add_parser`` (``formatter_class``)."""
    p = sub.add_parser(name, help=help, description=description, epilog=epilog, **kwargs)
    if run is not None:
        p.set_defaults(func=run)
    return p


def one_line(text: object) -> str:
    """``text`` on one line: its lines joined, blank ones dropped."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text + "\n")
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")


def emit(text: str) -> None:
    """Write ``text`` and a newline to stdout."""
    try:
        _write(sys.stdout, text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise StdoutClosed from None


def emit_json(obj: Any) -> None:
    """Write ``obj`` as one line of JSON (non-ASCII escaped, so any path survives)."""
    emit(json.dumps(obj))


def report(result: Any, as_json: bool) -> int:
    """Print ``result``: its ``to_json()`` as one line of JSON (``--json``), else its
    ``to_text()``; the exit code, 0."""
    if as_json:
        emit_json(result.to_json())
    else:
        emit(result.to_text())
    return 0


def say_error(text: str) -> None:
    """Write one line to stderr (never raises for an unencodable character)."""
    try:
        _write(sys.stderr, text)
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed: nowhere left to say it
        pass


def silence_stdout() -> None:
    """Point the stdout descriptor at /dev/null, so the interpreter's final flush does not
    fail again on a closed pipe (a no-op where stdout is not a real file)."""
    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):
        return
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def format_options(fmt: FileFormat, args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``args`` the file's format takes (Parquet: the decryption keys)."""
    if "decryption" not in fmt.options:
        return {}
    from bloomskip.cli.keys import decryption

    return {"decryption": decryption(args)}


def require_java(what: str, hint: str = "") -> None:
    """MissingDependencyError unless a Java runtime can be found (Spark needs one)."""
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        raise MissingDependencyError(
            f"{what} runs Spark, which needs Java 17+ (no java on PATH, no JAVA_HOME)" + hint
        )


def kernels_cached() -> bool:
    """Has numba cached any of bloomskip's compiled kernels on this machine, where it
    looks for them: under ``NUMBA_CACHE_DIR`` when set, else beside the package's
    modules (``__pycache__/*.nbi``) or in numba's user cache folder (a read-only
    install)? Without loading numba: asked before every command that runs kernels."""
    try:  # a folder that cannot be read, no home folder: say nothing rather than fail
        given = os.environ.get("NUMBA_CACHE_DIR")
        if given:  # numba names each source folder there <name>_<sha1 of its path>
            return next(Path(given).glob("*/*.nbi"), None) is not None
        root = Path(__file__).resolve().parent.parent
        if next(root.glob("*/__pycache__/*.nbi"), None) is not None:
            return True
        user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
        return next(user.glob("*/*.nbi"), None) is not None
    except (OSError, RuntimeError):
        return True


__all__ = [
    "PROG",
    "CommandListFormatter",
    "Parser",
    "StdoutClosed",
    "command",
    "emit",
    "emit_json",
    "format_options",
    "kernels_cached",
    "one_line",
    "report",
    "require_java",
    "say_error",
    "silence_stdout",
]
