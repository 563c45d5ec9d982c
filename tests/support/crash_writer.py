"""A writer of the zone-index crash tests, run as a script by :mod:`tests.support.writers`.

Usage: ``python -P crash_writer.py WORKDIR``. The process is a fresh interpreter in its
own session (never a fork of a process that has run anything), so it shares nothing with
the other writers or with pytest except the file system.

1. It imports bloomskip and warms up: one tiny build in a folder of its own, so the
   kernels are loaded before a job starts and a kill lands in the job, not in the
   start-up. SIGALRM (its default action ends the process, even in native code) bounds
   the warm-up. Then it prints ``ready``.
2. Jobs arrive as JSON lines on stdin, one at a time. For each, it optionally waits for a
   flag file (with a deadline), builds or refreshes, and prints one JSON line: ``exit``
   0 done, 3 :class:`~bloomskip.errors.CommitConflictError`, 1 any other error (the
   traceback in ``result``). SIGALRM bounds each job.
3. The end of stdin, from the start, means the test side closed it or died: the thread
   that reads the jobs SIGKILLs the process, warming up, busy or idle. SIGUSR1 dumps
   every thread's stack to stderr (faulthandler), which the test side asks for before it
   kills a writer that ran too long.

``kill_at`` makes it SIGKILL itself at one step of a commit; ``storage.os`` (the index
storage's module) is swapped for a proxy so only the index's own file calls are hooked.
The test side never gives such a writer (nor one it killed) another job.
"""

from __future__ import annotations

import faulthandler
import json
import os
import queue
import re
import shutil
import signal
import sys
import threading
import time
import traceback
from typing import Any

# bloomskip is imported in the functions, once SIGALRM bounds the start-up.

WARM_UP_S = 600  # imports and kernels (compiled here if the numba cache is cold)
JOB_S = 300  # longer than the test side's limit, which dumps stacks first
FLAG_S = 120


def die(*_a: Any, **_k: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


#: A manifest's name (links are made relative to its directory's descriptor).
_MANIFEST = re.compile(r"v\d{20}\.json\Z")


class OsProxy:
    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def hook(kill_at: str) -> None:
    from bloomskip.index import storage

    proxy = OsProxy()
    if kill_at == "table_temp_written":  # first object fsynced under its temporary name
        proxy.replace = die
    elif kill_at == "manifest_temp_written":  # manifest fsynced, not yet linked

        def link_or_die(src: str, dst: str, **kw: Any) -> None:
            if _MANIFEST.match(os.path.basename(dst)):
                die()
            os.link(src, dst, **kw)

        proxy.link = link_or_die
    elif kill_at == "manifest_linked":  # committed, temporary name not yet removed

        def link_then_die(src: str, dst: str, **kw: Any) -> None:
            os.link(src, dst, **kw)
            if _MANIFEST.match(os.path.basename(dst)):
                die()

        proxy.link = link_then_die
    elif kill_at.startswith("objects_written:"):  # N whole objects written, no manifest
        cls = storage.LocalStorage
        limit, real, count = int(kill_at.split(":")[1]), cls.write, [0]

        def write_then_maybe_die(*a: Any, **k: Any) -> Any:
            out = real(*a, **k)
            count[0] += 1
            if count[0] >= limit:
                die()
            return out

        cls.write = write_then_maybe_die  # tables too: write_table writes through it
    else:
        raise ValueError(f"unknown kill_at {kill_at}")
    storage.os = proxy


def run(job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    from bloomskip import index
    from bloomskip.errors import CommitConflictError

    if job.get("kill_at"):
        hook(job["kill_at"])
    flag, deadline = job.get("flag"), time.monotonic() + FLAG_S
    while flag and not os.path.exists(flag):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no flag file {flag} after {FLAG_S} s")
        time.sleep(0.0005)
    try:
        if job["op"] == "build":
            r = index.build(
                job["lake"],
                job["columns"],
                job["index"],
                zone_rows=job["zone_rows"],
                threads=job["threads"],
            )
        else:
            r = index.refresh(job["index"], threads=job["threads"])
    except CommitConflictError as e:
        return 3, {"conflict": str(e)}
    return 0, {
        "version": r.version,
        "retries": r.retries,
        "failed": r.failed,
        "committed": r.committed,
    }


def warm_up(workdir: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bloomskip import index

    lake = os.path.join(workdir, "lake")
    os.makedirs(lake)
    table = pa.table({"uid": [1, 2, 3], "name": ["a", "b", "c"]})
    pq.write_table(table, os.path.join(lake, "a.parquet"))
    index.build(lake, ["uid", "name"], os.path.join(workdir, "index"), zone_rows=2, threads=2)
    shutil.rmtree(workdir)


def read_jobs(jobs: queue.SimpleQueue[str]) -> None:
    """Every line of stdin to ``jobs``; at its end nobody waits for this writer: die."""
    for line in sys.stdin:
        jobs.put(line)
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    signal.alarm(WARM_UP_S)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    jobs: queue.SimpleQueue[str] = queue.SimpleQueue()
    threading.Thread(target=read_jobs, args=(jobs,), name="read_jobs", daemon=True).start()
    warm_up(os.path.join(sys.argv[1], f"warm-up-{os.getpid()}"))
    signal.alarm(0)
    print("ready", flush=True)
    while True:
        job = json.loads(jobs.get())
        signal.alarm(JOB_S)
        try:
            code, result = run(job)
        except BaseException:
            code, result = 1, {"error": traceback.format_exc()}
        signal.alarm(0)
        print(json.dumps({"exit": code, "result": result}), flush=True)


if __name__ == "__main__":
    main()
