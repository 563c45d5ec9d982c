"""Writer processes for the zone-index crash tests: start, kill, reap, never leave one.

Each writer is a fresh interpreter running :mod:`tests.support.crash_writer`, started
with ``subprocess`` in a session and process group of its own. Nothing is forked from a
process that has started threads or holds locks: a process that imported numpy or pyarrow
already has threads, and a lock held at the moment of a fork, or held across processes by
a writer that is then SIGKILLed, can hang the other writers forever (issue 18). Writers
share nothing but the file system, as separate processes in production do.

Starting an interpreter and loading the kernels takes longer than a build of the test
lake, so writers are started ahead and warm up while the test checks the index; a job
goes to a warm writer and starts the moment it is sent, so a kill at a delay after
:meth:`Writers.start` lands in the build, not in the start-up. No writer warms up while a
job runs, so measured and killed jobs compete for the CPU alike. A writer whose job ended
normally takes another job; one that was killed, or asked to kill itself (``kill_at``),
gets no other.

Nothing is left behind, however a run ends:

* every wait here has a deadline; a writer whose job runs longer than ``timeout_s`` gets
  its thread stacks dumped (SIGUSR1, faulthandler) into the failure message, then killed;
* kills go to the writer's process group, and a writer is reaped only after that, so the
  group id is never reused while it can still be signalled;
* :meth:`Writers.close` (the fixture's teardown) kills and reaps every writer still there;
* if pytest dies without a teardown (SIGTERM, SIGKILL), the writers' stdin reaches its
  end and each SIGKILLs itself. SIGALRM bounds a writer's start-up and each job anyway.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import bloomskip

WRITER = Path(__file__).with_name("crash_writer.py")
# Writers waiting for a job: never fewer than SPARES (a racing test takes two at once);
# when fewer are left, new ones are started up to IDLE_MAX, to warm up side by side on
# every core while the test checks the index; more than IDLE_MAX are retired.
SPARES = 2
IDLE_MAX = 4
READY_S = 600  # a cold numba cache compiles the kernels in the first writers

_ENV = {
    **os.environ,
    # the writers import the bloomskip these tests import
    "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(os.path.dirname(bloomskip.__file__)), os.environ.get("PYTHONPATH", "")]
    ),
}


@dataclass
class Writer:
    proc: subprocess.Popen
    stderr: Path
    ready: bool = False
    reusable: bool = True

    @property
    def pid(self) -> int:
        return self.proc.pid

    def line(self, timeout: float) -> str | None:
        """The writer's next line of output; "" at its end (it died); None if nothing
        came within ``timeout`` seconds. It prints one line per request, so none is ever
        left in the pipe's buffer while ``select`` waits."""
        assert self.proc.stdout is not None
        readable, _, _ = select.select([self.proc.stdout], [], [], max(0.0, timeout))
        return self.proc.stdout.readline() if readable else None


@dataclass
class Run:
    """A job given to a writer: ``exit`` 0 done, 3 CommitConflictError, 1 failed,
    ``-signal.SIGKILL`` killed; ``result`` the JSON the writer printed."""

    pid: int
    writer: Writer = field(repr=False)
    sent: float = field(repr=False)  # time.perf_counter() when the job was sent: its start
    ended: float = field(repr=False, default=0.0)  # ... when its outcome came
    exit: int | None = None
    result: dict | None = None


class Writers:
    """Warm writer processes; see the module docstring."""

    def __init__(self, workdir: Path, *, timeout_s: float, **defaults: Any) -> None:
        self.workdir = workdir
        self.timeout_s = timeout_s
        self.defaults = defaults  # job fields every job gets unless given
        self.started = 0
        self.idle: deque[Writer] = deque()  # warming up, or waiting for a job
        self.live: dict[int, Writer] = {}  # started and not reaped
        while len(self.idle) < IDLE_MAX:
            self._spawn()

    # -- processes ------------------------------------------------------------------

    def _spawn(self) -> None:
        self.started += 1
        stderr = self.workdir / f"writer-{self.started}.stderr"
        with open(stderr, "w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-P", str(WRITER), str(self.workdir)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=_ENV,
                start_new_session=True,  # its own process group, no controlling terminal
            )
        w = Writer(proc, stderr)
        self.live[w.pid] = w
        self.idle.append(w)

    def _ready(self, w: Writer) -> None:
        if not w.ready:
            line = w.line(READY_S)
            if line != "ready\n":
                self._kill(w)
                self._reap(w, 10)
                pytest.fail(f"writer {w.pid} not ready ({line!r}):\n{w.stderr.read_text()}")
            w.ready = True

    def _kill(self, w: Writer) -> None:
        """SIGKILL the writer's group; it is not reaped yet, so the group id is its."""
        w.reusable = False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(w.pid, signal.SIGKILL)

    def _reap(self, w: Writer, timeout: float) -> int:
        code = w.proc.wait(timeout)
        self.live.pop(w.pid, None)
        for pipe in (w.proc.stdin, w.proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        return code

    def _retire(self, w: Writer) -> None:
        self._kill(w)
        self._reap(w, 30)

    # -- jobs -----------------------------------------------------------------------

    def start(self, op: str, lake: Path, index: Path, **extra: Any) -> Run:
        """A writer running ``op`` ("build" or "refresh") of ``index`` on ``lake``,
        started now. No writer warms up while it runs: every job, measured or killed,
        runs with the same competition for the CPU."""
        if not self.idle:
            self._spawn()
        for spare in self.idle:
            self._ready(spare)
        w = self.idle.popleft()
        job = {"op": op, "lake": lake, "index": index} | self.defaults | extra
        if "kill_at" in job:
            w.reusable = False
        line = json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in job.items()})
        assert w.proc.stdin is not None
        w.proc.stdin.write(line + "\n")
        w.proc.stdin.flush()
        return Run(w.pid, w, time.perf_counter())

    def kill(self, run: Run) -> None:
        self._kill(run.writer)

    def wait(self, run: Run) -> Run:
        """The job's outcome; fails (with the writer's thread stacks) if it runs past the
        limit. A writer that ended its job normally waits for another."""
        w = run.writer
        line = w.line(run.sent + self.timeout_s - time.perf_counter())
        run.ended = time.perf_counter()
        if line is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGUSR1)  # faulthandler: every thread's stack
            time.sleep(1)
            self._retire(w)
            pytest.fail(
                f"a writer ran more than {self.timeout_s} s; its threads:\n{w.stderr.read_text()}"
            )
        if line and not line.endswith("\n"):  # killed while it printed: no outcome
            line = ""
        if line:
            got = json.loads(line)
            run.exit, run.result = got["exit"], got["result"]
            w.reusable &= run.exit in (0, 3)
        if not line or not w.reusable:  # it died, or was killed or will die: reap it
            self._kill(w)
            code = self._reap(w, 30)
            if not line:
                run.exit = code
                if code != -signal.SIGKILL:
                    run.result = {"stderr": w.stderr.read_text()[-4000:]}
        elif len(self.idle) < IDLE_MAX:
            self.idle.appendleft(w)  # warm: the next job's
        else:
            self._retire(w)
        if len(self.idle) < SPARES:
            while len(self.idle) < IDLE_MAX:
                self._spawn()
        return run

    def run_to_end(self, op: str, lake: Path, index: Path, **extra: Any) -> float:
        """Seconds a writer takes; fails unless it succeeded."""
        run = self.wait(self.start(op, lake, index, **extra))
        assert run.exit == 0, run
        return run.ended - run.sent

    def run_and_kill(self, op: str, lake: Path, index: Path, delay: float) -> bool:
        """SIGKILL a writer ``delay`` seconds after its start unless its job has ended;
        True if that cut it short, False if it had finished (successfully) before."""
        run = self.start(op, lake, index)
        time.sleep(max(0.0, run.sent + delay - time.perf_counter()))
        w = run.writer
        assert w.proc.stdout is not None
        if not select.select([w.proc.stdout], [], [], 0)[0]:  # still running
            self._kill(w)
        self.wait(run)
        if run.exit == -signal.SIGKILL:
            return True
        assert run.exit == 0, f"{op} failed on its own: {run}"
        return False

    def close(self) -> None:
        """Kill and reap every writer still there (spares, and any a failed test left)."""
        for w in list(self.live.values()):
            self._kill(w)
        for w in list(self.live.values()):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reap(w, 30)
        self.idle.clear()
