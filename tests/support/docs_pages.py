"""The fenced code blocks of the Markdown pages, and running them (tests/docs/test_docs.py).

What runs, per page, in the order the blocks appear, in one temporary working directory:

* ```` ```python ```` blocks: executed in one namespace per page, so a later block sees the
  names an earlier one defined. A traceback names the Markdown file and its line.
* ```` ```console ```` blocks: every line starting with ``$ `` is a command, continued by
  the lines that start with ``> `` (the shell's second prompt: after a ``\\``, in a
  here-document) or that follow a line ending in ``\\``. The lines after a command, up to
  the next ``$ ``, are the output it must print (stdout and stderr together). In that
  output, ``...`` inside a line matches any text, and a line that is only ``...`` matches
  any number of lines. A command with no output lines under it runs unchecked.
* ```` ```bash ```` / ```` ```sh ```` / ```` ```shell ```` blocks: run as one bash script
  (``set -euo pipefail``); their output is not compared.

Every shell command runs in bash with ``bloomskip`` on PATH: a shim that runs
``bloomskip.cli:main`` (the console script's entry point) with the interpreter and the
bloomskip package of the test run. A command must exit 0; to show a failure, write
``$ bloomskip ... ; echo "exit $?"``.

Everything else is not run: blocks without a language or in any other language
(``text``, ``json``, ...), and blocks marked on the line right above the fence with

* ``<!-- docs-test: skip REASON -->`` - never run (needs S3, a cluster, minutes, ...);
* ``<!-- docs-test: needs spark -->`` - runs on the shared ``spark`` fixture of
  tests/conftest.py (the page's test is marked ``spark``; ``bloomskip.spark.local_session()``
  then returns that session);
* ``<!-- docs-test: needs lance -->`` - the page is skipped without pylance.

Several words may share one marker: ``<!-- docs-test: needs spark lance -->``. A page with
a ``needs spark`` block is one test marked ``spark`` (``-m "not spark"`` leaves it out).
Links between pages are checked by :mod:`tests.support.docs_links`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Fence languages that run; everything else is shown, not run.
PYTHON = frozenset({"python", "py"})
CONSOLE = frozenset({"console"})
SCRIPT = frozenset({"bash", "sh", "shell"})
NEEDS = frozenset({"spark", "lance"})

#: A shell command that takes longer than this fails its page (nothing waits forever).
COMMAND_TIMEOUT = 300

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<words>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and code, and its marker."""

    path: Path
    line: int  # 1-based line number of the block's first code line
    lang: str
    code: str
    skip: str | None = None  # why it is not run, when marked skip
    needs: frozenset[str] = frozenset()

    @property
    def runs(self) -> bool:
        return self.skip is None and self.lang in PYTHON | CONSOLE | SCRIPT

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Page:
    """A Markdown file and its blocks."""

    path: Path
    blocks: list[Block] = field(default_factory=list)

    @property
    def needs(self) -> frozenset[str]:
        return frozenset().union(*(b.needs for b in self.blocks if b.runs))

    @property
    def runnable(self) -> list[Block]:
        return [b for b in self.blocks if b.runs]


def find_pages(root: Path) -> list[Path]:
    """README.md and every other Markdown file at the top of the repository, and every
    Markdown file under docs/."""
    found = sorted(root.glob("*.md")) + sorted((root / "docs").rglob("*.md"))
    return [p for p in found if p.is_file()]


def _marker(line: str, where: str) -> tuple[str | None, frozenset[str]]:
    words = _MARKER.match(line)["words"]  # type: ignore[index]
    head, _, rest = words.partition(" ")
    if head == "skip":
        return (rest.strip() or "marked skip"), frozenset()
    if head == "needs":
        wanted = frozenset(rest.split())
        unknown = wanted - NEEDS
        if not wanted or unknown:
            raise ValueError(f"{where}: unknown docs-test needs {sorted(unknown)}")
        return None, wanted
    raise ValueError(f"{where}: unknown docs-test marker {words!r} (skip ... / needs ...)")


def parse(path: Path) -> Page:
    """The fenced blocks of a Markdown file (CommonMark fences of backticks or tildes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = Page(path)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        lang = (m["info"].split() or [""])[0].lower()
        skip, needs = None, frozenset()
        prev = i - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        if prev >= 0 and _MARKER.match(lines[prev]):
            skip, needs = _marker(lines[prev], f"{path}:{prev + 1}")
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and not close.strip(fence[0]):
                break
            text = lines[j]
            body.append(text[min(indent, len(text) - len(text.lstrip(" "))) :])
            j += 1
        else:
            raise ValueError(f"{path}:{i + 1}: fence never closed")
        code = "\n".join(body) + "\n"
        page.blocks.append(Block(path, i + 2, lang, code, skip, needs))
        i = j + 1
    return page


@dataclass(frozen=True)
class Command:
    """A ``$ `` command of a console block and the output shown under it."""

    line: int
    command: str
    expected: str | None  # None: not compared


def console_commands(block: Block) -> list[Command]:
    """The commands of a console block, with their expected output."""
    out: list[Command] = []
    lines = block.code.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if lines[i].strip():
                raise ValueError(f"{block.path}:{block.line + i}: output before any '$ ' command")
            i += 1
            continue
        start = i
        parts = [lines[i][2:]]
        while i + 1 < len(lines) and (parts[-1].endswith("\\") or lines[i + 1].startswith("> ")):
            i += 1
            parts.append(lines[i].removeprefix("> "))
        i += 1
        shown: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        while shown and not shown[-1].strip():
            shown.pop()
        expected = "\n".join(shown) + "\n" if shown else None
        out.append(Command(block.line + start, "\n".join(parts), expected))
    return out


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, with ``...`` as the wildcard (within a
    line, or a whole line standing for any lines); trailing spaces do not count."""
    pattern = []
    for line in expected.splitlines():
        if line.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            parts = line.rstrip().split("...")
            pattern.append(r"[^\n]*?".join(re.escape(p) for p in parts) + r"\n")
    text = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch("".join(pattern), text) is not None


def cli_shim(bin_dir: Path) -> Path:
    """A ``bloomskip`` executable in ``bin_dir`` that runs this interpreter's bloomskip,
    as the console script does; returns ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "bloomskip"
    code = "import sys; from bloomskip.cli import main; sys.exit(main())"
    shim.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(code)} "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    return bin_dir


def shell_env(bin_dir: Path) -> dict[str, str]:
    """The environment of shell blocks: the shim first on PATH, then this interpreter's
    directory; PYTHONPATH starting with the bloomskip package imported here."""
    import bloomskip

    src = str(Path(bloomskip.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), env["PATH"]])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env["PYTHONUTF8"] = "1"
    env.setdefault("COLUMNS", "100")
    return env


class PageError(AssertionError):
    """A block of a page failed; the message names the file and line."""


class PageRunner:
    """Runs the blocks of one page in order, in the current working directory."""

    def __init__(self, page: Page, bin_dir: Path) -> None:
        self.page = page
        self.env = shell_env(cli_shim(bin_dir))
        self.namespace: dict[str, Any] = {"__name__": "__docs__"}

    def run(self) -> int:
        """Run every block that runs; return how many ran."""
        blocks = self.page.runnable
        for block in blocks:
            if block.lang in PYTHON:
                self.python(block)
            elif block.lang in CONSOLE:
                for cmd in console_commands(block):
                    self.console(block, cmd)
            else:
                self.script(block)
        return len(blocks)

    def python(self, block: Block) -> None:
        # Blank lines in front, so that tracebacks give the line in the Markdown file.
        code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
        exec(code, self.namespace)

    def _bash(self, script: str, where: str) -> str:
        try:
            done = subprocess.run(
                ["bash", "-c", script],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=COMMAND_TIMEOUT,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            raise PageError(f"{where}: still running after {COMMAND_TIMEOUT} s") from None
        if done.returncode != 0:
            raise PageError(f"{where}: exit code {done.returncode}\n{done.stdout}")
        return done.stdout

    def console(self, block: Block, cmd: Command) -> None:
        where = f"{block.path}:{cmd.line}"
        got = self._bash(cmd.command, where)
        if cmd.expected is not None and not output_matches(cmd.expected, got):
            raise PageError(
                f"{where}: $ {cmd.command}\n--- shown in the page\n{cmd.expected}--- printed\n{got}"
            )

    def script(self, block: Block) -> None:
        self._bash("set -euo pipefail\n" + block.code, block.where)
