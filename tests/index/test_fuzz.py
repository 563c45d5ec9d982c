"""Fuzzing the zone index's own files (issue 17): every byte of an index is untrusted.

A small lake of six Parquet files is indexed (two columns, file filters on, zones of 50
rows), refreshed after a file is added (a second segment) and after one is deleted (a
dropped fragment), so the index holds every kind of file: manifests of three versions,
fragment and file tables, serving directories and slabs (format 1's zone tables are
forged in a copy rewritten as format 1; serving parts are damaged during a build).
Each case copies it and mutates one file (:mod:`tests.support.index_fuzz`), then asks it
``=``, ``IN``, ``IS NULL`` and their AND/OR, with and without listing the source, and
``status``; some cases also ``refresh`` and ``vacuum`` it. A sibling directory of
canary files stands next to the index, and an audit hook records what Python opens,
creates and deletes.

* **Damaged** files (checksums not recomputed) must give a typed one-line error or
  candidates that hold every row DuckDB finds, in both query modes and after a refresh.
* **Forged** files (checksums recomputed: a CRC finds damage, not lies) must give an
  answer or a typed one-line error, within a time bound and a memory bound, whatever a
  count claims.
* Always: nothing outside the index root is opened, written or deleted (reads of the
  lake aside), canaries keep their bytes and times, ``vacuum`` keeps files that are not
  the index's and every file a kept version uses.

What the loops found is pinned by a test each in ``test_fuzz_found.py``; the lake and
index are :mod:`tests.support.index_world`'s.

Seeded loops: case ``i`` is the same mutation on every run. More cases when hunting:
``BLOOMSKIP_INDEX_FUZZ=2000``; to replay damaged case 1216 alone,
``BLOOMSKIP_INDEX_FUZZ_FIRST=1216 BLOOMSKIP_INDEX_FUZZ=1``.
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import signal
import time
import traceback
import tracemalloc

import numpy as np
import pytest

from bloomskip import index
from bloomskip.errors import BloomskipError
from bloomskip.index import store
from bloomskip.index.build import LocalRunner
from tests.support import index_fuzz as fz
from tests.support import index_world as iw

duckdb = pytest.importorskip("duckdb")

CASES = int(os.environ.get("BLOOMSKIP_INDEX_FUZZ", "80"))
FIRST = int(os.environ.get("BLOOMSKIP_INDEX_FUZZ_FIRST", "0"))  # to replay case N: N, 1
FORGED = max(CASES // 2, 25)  # over the kinds of forgery


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from iw.world(str(tmp_path_factory.mktemp("index-fuzz")))


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


class Case:
    """One mutated copy of the index and what went wrong with it."""

    def __init__(self, world, name: str, root: str | None = None) -> None:
        self.world, self.name = world, name
        self.root = root or os.path.join(world["base"], "work", name)
        if root is None:  # a copy of the world's index
            shutil.rmtree(self.root, ignore_errors=True)
            shutil.copytree(world["idx"], self.root, symlinks=True)
        self.problems: list[str] = []
        self.what = ""
        self.typed = 0
        self.watch = fz.Watch()
        self.version = 3  # the world's latest: no answer may come from an older one

    def attempt(self, label: str, op):
        """``op()`` (watched), or None after a typed one-line error; anything else is a
        problem."""
        try:
            with self.watch:
                return op()
        except BloomskipError as e:
            self.typed += 1
            if "\n" in str(e).strip():
                self.problems.append(f"{label}: a message of several lines: {str(e)[:300]!r}")
        except _Timeout:
            raise
        except Exception as e:  # a traceback: exactly what must never happen
            frames = traceback.extract_tb(e.__traceback__)[-3:]
            where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames[::-1])
            self.problems.append(f"{label}: {type(e).__name__}: {str(e)[:200]} at {where}")
        return None

    def queries(self, strict: bool) -> None:
        for check_source in (True, False):
            zi = self.attempt("open", lambda: index.open(self.root))  # columns load once
            for where in iw.PREDICATES if zi is not None else ():
                res = self.attempt(
                    f"query {where!r} check_source={check_source}",
                    lambda w=where, c=check_source, z=zi: z.query(w, check_source=c),
                )
                if res is not None and res.version < self.version:
                    self.problems.append(f"answered from version {res.version}: reverted")
                if res is not None and strict:
                    miss = iw.missing(res, self.world["truth"][where])
                    if miss:
                        self.problems.append(f"false negative, {where} ({check_source}): {miss}")
        self.attempt("status", lambda: index.open(self.root).status())

    def refresh(self, strict: bool) -> None:
        done = self.attempt("refresh", lambda: index.refresh(self.root, progress=False))
        if done is not None:
            self.version = done.version
            self.queries(strict)

    def vacuum(self, strict: bool) -> None:
        """Vacuum keeps what is not the index's; damaged, it keeps every file the newest
        manifest names, and deletes nothing at all if it fails."""
        foreign = [os.path.join(self.root, "notes.txt"), os.path.join(self.root, "columns", "x")]
        for f in foreign:
            if os.path.isdir(os.path.dirname(f)) and not os.path.islink(os.path.dirname(f)):
                with open(f, "wb") as fh:
                    fh.write(b"mine")
        before, refs = fz.files(self.root), fz.newest_references(self.root)
        done = self.attempt("vacuum", lambda: index.vacuum(self.root, keep_versions=1,
                                                             min_age_s=0))  # fmt: skip
        after = fz.files(self.root)
        for f in foreign:
            home = os.path.dirname(f)
            if os.path.isdir(home) and not os.path.islink(home) and not os.path.exists(f):
                self.problems.append(f"vacuum deleted {f}, which is not the index's")
        if not strict:
            return
        if done is None and before - after:
            self.problems.append(f"a failed vacuum deleted {sorted(before - after)[:3]}")
        lost = (refs or set()) & before - after
        if lost:
            self.problems.append(f"vacuum deleted {sorted(lost)[:3]}, the newest version's")

    def run(self, mutate, *, strict: bool, heavy: bool, memory: bool = False) -> None:
        rng = random.Random(self.name)
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, iw.CASE_SECONDS)
        if memory:
            tracemalloc.start()
        try:
            self.what = mutate(self.root, rng)
            self.queries(strict)
            if heavy:
                self.refresh(strict)
                self.vacuum(strict)
            self.problems += self.watch.outside(
                self.world["base"], self.root, readable=(self.world["lake"],)
            )
            if memory:
                peak = tracemalloc.get_traced_memory()[1]
                if peak > iw.MEMORY:
                    self.problems.append(f"{peak:,} bytes allocated")
        except _Timeout:
            self.problems.append(f"no answer within {iw.CASE_SECONDS} s")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if memory:
                tracemalloc.stop()
        if not self.problems:
            shutil.rmtree(self.root, ignore_errors=True)


def _report(failures: list[tuple[str, str, list[str]]]) -> str:
    lines = []
    for name, what, problems in failures[:10]:
        lines.append(f"{name} ({what}):")
        lines += [f"    {p}" for p in problems[:4]]
    return f"{len(failures)} cases failed:\n" + "\n".join(lines)


def test_damaged_index_files_give_typed_errors_or_every_matching_row(world):
    failures, typed = [], 0
    t0 = time.perf_counter()
    for i in range(FIRST, FIRST + CASES):
        case = Case(world, f"damaged-{i}")
        case.run(lambda root, rng: fz.damage(root, world["outside"], rng), strict=True,
                 heavy=i % 8 == 0)  # fmt: skip
        typed += case.typed
        if case.problems:
            failures.append((f"damaged-{i}", case.what, case.problems))
    assert not failures, _report(failures)
    assert CASES < 20 or typed > CASES  # most damage is caught, not silently ignored
    print(f"{CASES} damaged indexes, {typed} typed errors, {time.perf_counter() - t0:.1f} s")


FORGERS = {
    "manifest": fz.forge_manifest,
    "directory": fz.forge_directory,
    "slab": fz.forge_slab,
    "table": fz.forge_table,
    "format-1": fz.forge_format_1,
}


@pytest.mark.parametrize("kind", sorted(FORGERS))
def test_forged_index_files_answer_or_fail_typed_in_bounded_time_and_memory(world, kind):
    failures = []
    for i in range(FORGED // len(FORGERS)):
        case = Case(world, f"forged-{kind}-{i}")
        case.run(FORGERS[kind], strict=False, heavy=i % 4 == 0, memory=True)
        if case.problems:
            failures.append((f"forged-{kind}-{i}", case.what, case.problems))
    assert not failures, _report(failures)


# --------------------------------------------------------------------------- build parts


class _DamagingRunner(LocalRunner):
    """Threads, as the local engine; a part is damaged between the tasks and the slabs."""

    def __init__(self, root: str, rng: random.Random) -> None:
        super().__init__(threads=1, progress=False)
        self.root, self.rng, self.what = root, rng, "no part"

    def slabs(self, storage, jobs) -> list[np.ndarray]:
        parts = sorted(glob.glob(os.path.join(self.root, "columns", "*", "*.blocks")))
        if parts:
            path = self.rng.choice(parts)
            with open(path, "rb") as fh:
                data, what = fz.damage_bytes(fh.read(), self.rng)
            with open(path, "wb") as fh:
                fh.write(data)
            self.what = f"{os.path.basename(path)}: {what}"
        return super().slabs(storage, jobs)


def test_parts_damaged_before_their_slabs_are_built(world):
    """A serving part (``.blocks``) is read back to build the slabs; damaged in between,
    the build fails with a typed error and commits nothing, or builds what it read."""
    failures, typed = [], 0
    for i in range(max(CASES // 10, 8)):
        root = os.path.join(world["base"], "parts", str(i))
        runner = _DamagingRunner(root, random.Random(f"parts-{i}"))
        case = Case(world, f"parts-{i}", root)
        case.version = 1
        built = case.attempt("build", lambda r=root, run=runner: index.build(
            world["lake"], ["s", "k"], r, zone_rows=iw.ZONE_ROWS, runner=run))  # fmt: skip
        if built is None:
            typed += 1
            if store.versions(root):
                case.problems.append("a failed build committed a version")
        else:
            case.queries(strict=True)
        if case.problems:
            failures.append((f"parts-{i}", runner.what, case.problems))
    assert not failures, _report(failures)
    assert typed  # damage is found, not built into the slabs
