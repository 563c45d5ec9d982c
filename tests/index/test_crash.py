"""Crash safety and concurrent writers of the zone index (issue 5, "Done when").

* **Killed writers.** Builds and refreshes run in writer processes (fresh interpreters,
  warmed up before their job, in process groups of their own: :mod:`tests.support.writers`)
  and are SIGKILLed after a seeded random delay, a uniform fraction of the duration of a
  run measured first; and also at each step of a commit (a table's temporary file written,
  N tables written, the manifest written under its temporary name, the manifest linked).
  Between refreshes the lake changes: files are added, rewritten and deleted. After
  every kill the committed versions are 1..N with at most one more than before, every
  manifest parses and the tables it names exist; with no version, ``open`` raises
  :class:`~bloomskip.errors.IndexNotFoundError`; otherwise the index answers correctly
  (below). A normal refresh afterwards succeeds and answers correctly and precisely.
* **Racing writers.** Two writers build or refresh one index at the same moment (both
  wait for a flag file, created once both are ready): each commits or raises
  :class:`~bloomskip.errors.CommitConflictError`; versions stay consecutive, every
  manifest parses, the index answers correctly. :func:`bloomskip.index.store.publish`
  is raced by two threads per version too: exactly one wins.
* **Orphans.** After killed writers, ``vacuum(min_age_s=0)`` leaves only the kept
  manifests and the tables they reference, and the index still answers correctly.

"Answers correctly": for equality, ``IN``, ``OR`` and ``AND`` predicates on present keys
(some in files added or rewritten after the first build) and absent keys, every row of
the lake that matches (found by reading the files with pyarrow) lies in a candidate of
its file - a whole-file candidate (``zones`` None) or a zone ``(start, length)`` with
``start <= row < start + length``; candidates are only files of the lake.

File identity is ``(path, size, mtime_ns)``. Every write of a lake file here sets a
distinct mtime with ``os.utime(path, ns=(t, t))``: a rewrite within the file system's
timestamp granularity would otherwise keep the old mtime, and a *same-size* rewrite (which
this lake makes on purpose: fixed-width values, no compression, no dictionary) would be
indistinguishable from the old file - the documented limit of that identity.
"""

from __future__ import annotations

import os
import random
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import CommitConflictError, IndexNotFoundError
from bloomskip.index import store
from bloomskip.index.layout import MARKER
from tests.support.writers import Writers

FILES = 30
ROWS = 2000
ZONE_ROWS = 512
THREADS = 2
COLUMNS = ["uid", "name"]
HOT_UID = 123_456_789  # a few rows of every file
ABSENT_UID = 2**50 + 7  # uids are drawn from [0, 2**40)
ABSENT_NAME = "absent"  # names are "n0000".."n4999"
MTIME_BASE_NS = 1_600_000_000 * 10**9
TIMEOUT_S = 120  # a writer's job, in seconds (a test lake's build takes well under 1 s)

# --------------------------------------------------------------------------- the lake


class Lake:
    """Parquet files of ``uid int64, name string``; every write gets a distinct mtime.

    Files are written without compression or dictionary and with fixed-width values, so
    a rewrite with the same row count has the same size: only the mtime tells it apart.
    """

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        root.mkdir()
        self.rng = np.random.default_rng(seed)
        self.writes = 0
        self.serial = 0
        self.recent: list[Path] = []  # added or rewritten after the initial files
        self._tables: dict[tuple[str, int, int], pa.Table] = {}

    def populate(self, n: int = FILES) -> None:
        for _ in range(n):
            self._write(self._next_path(), ROWS)
        self.recent.clear()

    def _next_path(self) -> Path:
        self.serial += 1
        return self.root / f"part-{self.serial:04d}.parquet"

    def _write(self, path: Path, rows: int) -> None:
        uid = self.rng.integers(0, 2**40, rows)
        uid[self.rng.choice(rows, 3, replace=False)] = HOT_UID
        names = [f"n{u % 5000:04d}" for u in uid]
        table = pa.table({"uid": uid, "name": names})
        pq.write_table(table, path, compression="none", use_dictionary=False, row_group_size=700)
        self.writes += 1
        t = MTIME_BASE_NS + self.writes * 10**9  # distinct: see the module docstring
        os.utime(path, ns=(t, t))
        if path in self.recent:
            self.recent.remove(path)
        self.recent.append(path)

    def files(self) -> list[Path]:
        return sorted(self.root.glob("*.parquet"))

    def table(self, path: Path) -> pa.Table:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in self._tables:
            self._tables[key] = pq.read_table(path)
        return self._tables[key]

    # -- changes ------------------------------------------------------------------

    def add(self, rng: random.Random | None = None) -> str:
        self._write(self._next_path(), ROWS)
        return "add"

    def rewrite_same_size(self, rng: random.Random) -> str:
        path = rng.choice(self.files())
        before = path.stat()
        self._write(path, self.table(path).num_rows)
        after = path.stat()
        assert after.st_size == before.st_size, "the lake's same-size rewrite changed size"
        assert after.st_mtime_ns != before.st_mtime_ns
        return "rewrite (same size)"

    def rewrite_resized(self, rng: random.Random) -> str:
        self._write(rng.choice(self.files()), rng.randrange(300, 3000))
        return "rewrite (new size)"

    def delete(self, rng: random.Random) -> str:
        path = rng.choice(self.files())
        path.unlink()
        if path in self.recent:
            self.recent.remove(path)
        return "delete"

    def change(self, rng: random.Random) -> list[str]:
        """A file added or rewritten, and half of the time one deleted (while more than 20
        are left)."""
        done = [rng.choice([self.add, self.rewrite_same_size, self.rewrite_resized])(rng)]
        if rng.random() < 0.5 and len(self.files()) > 20:
            done.append(self.delete(rng))
        return done

    # -- questions ----------------------------------------------------------------

    def queries(self, rng: random.Random) -> list[Query]:
        """Present keys (most from recently added/rewritten files) and absent keys."""
        files = self.files()
        recent = [p for p in self.recent if p.exists()]
        sources = rng.sample(recent, min(3, len(recent))) + rng.sample(files, 2)
        picks = []
        for path in sources:
            t = self.table(path)
            r = rng.randrange(t.num_rows)
            picks.append((t.column("uid")[r].as_py(), t.column("name")[r].as_py()))
        (u0, n0), (u1, _), (_, n2) = picks[0], picks[1], picks[2 % len(picks)]
        qs = [Query.eq("uid", HOT_UID)]
        qs += [Query.eq("uid", u) for u, _ in picks]
        qs += [Query.eq("name", n0), Query.eq("name", picks[-1][1])]
        qs += [Query.eq("uid", ABSENT_UID, absent=True)]
        qs += [Query.eq("name", ABSENT_NAME, absent=True)]
        qs += [Query.isin("uid", [u0, ABSENT_UID, u1])]
        qs += [Query.either(("uid", u1), ("name", n2))]
        qs += [Query.both(("uid", u0), ("name", n0))]
        return qs


@dataclass(frozen=True)
class Query:
    sql: str
    columns: frozenset[str]
    match: Callable[[pa.Table], np.ndarray]  # which rows of a file match
    absent: bool = False  # no row of the lake matches, by construction

    @staticmethod
    def _lit(v) -> str:
        return f"'{v}'" if isinstance(v, str) else str(v)

    @staticmethod
    def _rows(t: pa.Table, col: str, values: list) -> np.ndarray:
        return pc.is_in(t.column(col), value_set=pa.array(values)).to_numpy(zero_copy_only=False)

    @classmethod
    def eq(cls, col: str, v, absent: bool = False) -> Query:
        sql = f"{col} = {cls._lit(v)}"
        return cls(sql, frozenset([col]), lambda t: cls._rows(t, col, [v]), absent)

    @classmethod
    def isin(cls, col: str, vs: list) -> Query:
        sql = f"{col} IN ({', '.join(cls._lit(v) for v in vs)})"
        return cls(sql, frozenset([col]), lambda t: cls._rows(t, col, vs))

    @classmethod
    def either(cls, a: tuple[str, object], b: tuple[str, object]) -> Query:
        sql = f"{a[0]} = {cls._lit(a[1])} OR {b[0]} = {cls._lit(b[1])}"
        cols = frozenset([a[0], b[0]])
        return cls(sql, cols, lambda t: cls._rows(t, a[0], [a[1]]) | cls._rows(t, b[0], [b[1]]))

    @classmethod
    def both(cls, a: tuple[str, object], b: tuple[str, object]) -> Query:
        sql = f"{a[0]} = {cls._lit(a[1])} AND {b[0]} = {cls._lit(b[1])}"
        cols = frozenset([a[0], b[0]])
        return cls(sql, cols, lambda t: cls._rows(t, a[0], [a[1]]) & cls._rows(t, b[0], [b[1]]))


# --------------------------------------------------------------------------- checks


def check_answers(root: Path, lake: Lake, queries: list[Query], *, fresh: bool = False) -> None:
    """Every matching row of the lake is in a candidate. With ``fresh`` (the index covers
    the lake as it is), a query on indexed columns only also gets zones for every
    candidate, and one on an absent key keeps few zones."""
    zi = index.open(root)
    files = {str(p): p for p in lake.files()}
    if fresh:
        status = zi.status()
        assert status["coverage"] == 1.0, status
    for q in queries:
        res = zi.query(q.sql)
        assert res.version == zi.version
        got = {}
        for c in res.files:
            assert c.path in files, f"{q.sql}: candidate {c.path} is not a file of the lake"
            assert c.path not in got, f"{q.sql}: {c.path} is a candidate twice"
            got[c.path] = c
        for path, p in files.items():
            t = lake.table(p)
            rows = np.flatnonzero(q.match(t))
            if rows.size == 0:
                continue
            assert not q.absent, f"{q.sql}: the lake holds it ({path})"
            c = got.get(path)
            assert c is not None, f"v{zi.version} {q.sql}: rows {rows} of {path} not candidates"
            if c.zones is None:
                continue
            covered = np.zeros(t.num_rows, dtype=np.bool_)
            for start, length in c.zones:
                assert start >= 0 and start + length <= t.num_rows, (q.sql, path, c.zones)
                covered[start : start + length] = True
            missing = rows[~covered[rows]]
            assert missing.size == 0, (
                f"v{zi.version} {q.sql}: rows {missing} of {path} outside zones {c.zones}"
            )
        if fresh and q.columns <= set(zi.columns):
            for c in res.files:
                assert c.zones is not None, f"{q.sql}: {c.path} not indexed ({c.reason})"
            if q.absent:
                assert res.zones_candidate <= max(2, res.zones_total // 20), (
                    q.sql,
                    res.zones_candidate,
                    res.zones_total,
                )


def check_versions(root: Path, *, previous: int, first: int = 1) -> int:
    """Versions are ``first``..N with N - ``previous`` in {0, 1} (one writer commits at
    most once); every manifest parses and names tables that exist. Returns N (0: none)."""
    found = store.versions(str(root))
    if not found:
        assert previous == 0, f"versions up to {previous} disappeared"
        with pytest.raises(IndexNotFoundError):
            index.open(root)
        return 0
    assert found == list(range(first, found[-1] + 1)), found
    assert found[-1] - previous in (0, 1), (previous, found)
    check_manifests(root)
    return found[-1]


def check_manifests(root: Path) -> None:
    for v in store.versions(str(root)):
        m = store.read_manifest(str(root), v)
        assert m.version == v
        for rel in store.referenced(m):
            assert (root / rel).is_file(), f"v{v} names {rel}, which does not exist"


def files_under(root: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
        for d, _, fs in os.walk(root)
        for f in fs
    }


def live_files(root: Path) -> set[str]:
    """The kept manifests and every table they reference."""
    out = set()
    out.add(MARKER)
    for v in store.versions(str(root)):
        out.add(store.manifest_name(v))
        out |= store.referenced(store.read_manifest(str(root), v))
    return out


@pytest.fixture(scope="module")
def writers(tmp_path_factory):
    if os.name != "posix":
        pytest.skip("writers are killed with POSIX signals")
    w = Writers(
        tmp_path_factory.mktemp("writers"),
        timeout_s=TIMEOUT_S,
        columns=COLUMNS,
        zone_rows=ZONE_ROWS,
        threads=THREADS,
    )
    try:
        yield w
    finally:
        w.close()


# --------------------------------------------------------------------------- tests


def test_builds_and_refreshes_killed_at_random_points_leave_an_index_that_answers(
    tmp_path, writers
):
    """Killed first builds, then refreshes (and same-column builds) killed after lake
    changes; after each kill: versions, manifests, answers (or IndexNotFoundError). Then a
    normal refresh, and vacuum of the orphans the kills left."""
    rng = random.Random(20250505)
    lake = Lake(tmp_path / "lake", seed=1)
    lake.populate()
    root = tmp_path / "index"

    # How long a full build and a refresh after a change take (twice each, in a scratch
    # index). Kills come at uniform random fractions of that; as runs vary in length,
    # some finish first and commit, so later kills hit an index that moved on.
    scratch = tmp_path / "scratch"
    build_s = sum(writers.run_to_end("build", lake.root, scratch / str(i)) for i in range(2)) / 2
    refresh_s = 0.0
    for _ in range(2):
        lake.change(rng)
        refresh_s += writers.run_to_end("refresh", lake.root, scratch / "0") / 2

    version, killed, runs = 0, 0, []

    def kill_one(op: str, changes: list[str]) -> None:
        nonlocal version, killed
        frac = rng.random()
        cut = writers.run_and_kill(op, lake.root, root, frac * (refresh_s if version else build_s))
        killed += cut
        runs.append((op, changes, round(frac, 2), "killed" if cut else "finished"))
        version = check_versions(root, previous=version)  # no version: open raises
        if version:
            check_answers(root, lake, lake.queries(rng))

    while len(runs) < 6 and not version:  # the first build, killed
        kill_one("build", [])
    if not version:  # every first build was cut short: commit one, to kill refreshes
        writers.run_to_end("build", lake.root, root)
        version = check_versions(root, previous=0)
    for i in range(18):  # refreshes (and builds of the same columns) after changes
        changes = lake.change(rng)
        kill_one("build" if i % 4 == 3 else "refresh", changes)
    # Runs must really have been cut short. Timings measured on a loaded 2-core machine
    # vary, so this asks for a few kills rather than a fixed share.
    assert killed >= 4, runs

    # A normal refresh (or first build) succeeds and answers correctly and precisely.
    if version:
        report = index.refresh(root, threads=THREADS)
    else:
        report = index.build(lake.root, COLUMNS, root, zone_rows=ZONE_ROWS, threads=THREADS)
    # (nothing to commit when the last run got its changes in before it was killed)
    assert report.version == version + report.committed and not report.failed
    version = check_versions(root, previous=version)
    check_answers(root, lake, lake.queries(rng), fresh=True)

    # Vacuum: only the kept manifests' tables stay (temporary manifests in _manifests
    # are the subject of test_vacuum_removes_temporary_manifests_of_killed_commits).
    removed = index.vacuum(root, min_age_s=0)
    tables = {f for f in files_under(root) if not f.startswith(store.MANIFESTS + "/")}
    live = live_files(root)
    assert tables <= live, sorted(tables - live)
    assert not set(removed) & live
    assert store.versions(str(root)) == list(range(max(1, version - 4), version + 1))
    check_manifests(root)
    check_answers(root, lake, lake.queries(rng), fresh=True)
    lake.change(rng)
    assert index.refresh(root, threads=THREADS).version == version + 1
    check_answers(root, lake, lake.queries(rng), fresh=True)


KILL_POINTS = [
    "table_temp_written",
    "objects_written:1",
    "objects_written:3",
    "manifest_temp_written",
    "manifest_linked",
]


def test_first_build_killed_at_each_commit_step_commits_nothing_or_everything(tmp_path, writers):
    """Only a kill after the manifest is linked leaves version 1; before it, open and
    refresh raise IndexNotFoundError and a new build succeeds in the same directory."""
    lake = Lake(tmp_path / "lake", seed=2)
    lake.populate(8)
    rng = random.Random(5)
    for point in KILL_POINTS:
        root = tmp_path / point.replace(":", "-")
        run = writers.wait(writers.start("build", lake.root, root, kill_at=point))
        assert run.exit == -signal.SIGKILL, (point, run)
        version = check_versions(root, previous=0)
        assert version == (1 if point == "manifest_linked" else 0), point
        if version:
            check_answers(root, lake, lake.queries(rng), fresh=True)
        index.vacuum(root, min_age_s=0)
        if not version:
            with pytest.raises(IndexNotFoundError):
                index.refresh(root)
        report = index.build(lake.root, COLUMNS, root, zone_rows=ZONE_ROWS, threads=THREADS)
        # the version the kill left already holds everything: nothing to commit
        assert (report.version, report.committed) == ((1, False) if version else (1, True))
        check_answers(root, lake, lake.queries(rng), fresh=True)


def test_refresh_killed_at_each_commit_step_keeps_previous_or_next_version(tmp_path, writers):
    """Each kill (after a file added, one rewritten to the same size, one deleted) leaves
    the previous version, or the next once the manifest is linked, answering correctly;
    vacuum then removes the orphan tables; a normal refresh catches up."""
    lake = Lake(tmp_path / "lake", seed=3)
    lake.populate(10)
    root = tmp_path / "index"
    index.build(lake.root, COLUMNS, root, zone_rows=ZONE_ROWS, threads=THREADS)
    rng = random.Random(7)
    version = 1
    for point in KILL_POINTS:
        lake.add()
        lake.rewrite_same_size(rng)
        lake.delete(rng)
        run = writers.wait(writers.start("refresh", lake.root, root, kill_at=point))
        assert run.exit == -signal.SIGKILL, (point, run)
        new = check_versions(root, previous=version)
        assert new == version + (point == "manifest_linked"), point
        version = new
        check_answers(root, lake, lake.queries(rng))
    tables = {f for f in files_under(root) if not f.startswith(store.MANIFESTS + "/")}
    assert tables - live_files(root), "the killed refreshes left no orphan table"
    index.vacuum(root, min_age_s=0)
    tables = {f for f in files_under(root) if not f.startswith(store.MANIFESTS + "/")}
    assert tables <= live_files(root), sorted(tables - live_files(root))
    check_answers(root, lake, lake.queries(rng))
    caught_up = KILL_POINTS[-1] == "manifest_linked"  # the last kill committed already
    report = index.refresh(root, threads=THREADS)
    assert (report.version, report.committed) == (version + (not caught_up), not caught_up)
    check_answers(root, lake, lake.queries(rng), fresh=True)


def test_vacuum_removes_temporary_manifests_of_killed_commits(tmp_path, writers):
    """A commit killed between writing its manifest under a temporary name and removing
    that name leaves ``_manifests/.tmp-*.json``; vacuum must remove it like any orphan."""
    lake = Lake(tmp_path / "lake", seed=4)
    lake.populate(4)
    root = tmp_path / "index"
    index.build(lake.root, COLUMNS, root, zone_rows=ZONE_ROWS, threads=THREADS)
    for point in ("manifest_temp_written", "manifest_linked"):
        lake.add()
        run = writers.wait(writers.start("refresh", lake.root, root, kill_at=point))
        assert run.exit == -signal.SIGKILL, (point, run)
    left = {f for f in files_under(root) if f.startswith(f"{store.MANIFESTS}/.tmp-")}
    assert len(left) == 2, sorted(files_under(root))
    index.vacuum(root, min_age_s=0)
    assert files_under(root) == live_files(root), sorted(files_under(root) - live_files(root))
    check_answers(root, lake, lake.queries(random.Random(3)))


def test_two_writers_racing_both_commit_or_raise_commit_conflict(tmp_path, writers):
    """Rounds: both build a new index; both refresh; both build the indexed column; one
    adds a column while the other refreshes; both refresh; both build both columns."""
    lake = Lake(tmp_path / "lake", seed=5)
    lake.populate()
    root = tmp_path / "index"
    rng = random.Random(11)
    plans = [
        (("build", ["uid"]), ("build", ["uid"])),
        (("refresh", None), ("refresh", None)),
        (("build", ["uid"]), ("build", ["uid"])),
        (("build", ["uid", "name"]), ("refresh", None)),
        (("refresh", None), ("refresh", None)),
        (("build", COLUMNS), ("build", COLUMNS)),
    ]
    version, contended, outcomes = 0, 0, []
    for i, plan in enumerate(plans):
        if i:
            lake.add()
            lake.rewrite_same_size(rng)
            lake.rewrite_resized(rng)
        flag = tmp_path / f"go-{i}"
        runs = [
            writers.start(op, lake.root, root, flag=flag, **({"columns": cols} if cols else {}))
            for op, cols in plan
        ]
        flag.touch()
        results = [writers.wait(r) for r in runs]
        committed = 0
        for (op, _), run in zip(plan, results, strict=True):
            assert run.exit in (0, 3), f"round {i} {op}: {run}"
            out = run.result
            if run.exit == 3:
                assert "committed by another writer" in out["conflict"], out
                contended += 1
            else:  # committed, or re-planned on the other's version and found nothing new
                committed += out["committed"]
                contended += out["retries"] > 0
                assert not out["failed"], out
        outcomes.append([r.result for r in results])
        assert committed >= 1, outcomes
        found = store.versions(str(root))
        assert found == list(range(1, version + committed + 1)), (found, outcomes)
        assert all(r.result["version"] in found for r in results if r.exit == 0), outcomes
        version = found[-1]
        check_manifests(root)
        check_answers(root, lake, lake.queries(rng), fresh=True)
    assert contended, f"the writers never overlapped: {outcomes}"
    assert set(index.open(root).columns) == set(COLUMNS)


def test_two_threads_publishing_one_version_exactly_one_wins(tmp_path):
    """store.publish raced by two threads for each of 40 versions: one commits (its
    manifest is the one on disk), the other gets CommitConflictError."""
    lake = Lake(tmp_path / "lake", seed=6)
    lake.populate(2)
    root = tmp_path / "index"
    index.build(lake.root, ["uid"], root, zone_rows=ZONE_ROWS, threads=1)
    base = store.read_manifest(str(root), 1)
    for v in range(2, 42):
        barrier = threading.Barrier(2)
        outcome: dict[int, str] = {}

        def publish(who: int, v=v, barrier=barrier, outcome=outcome) -> None:
            m = replace(base, version=v, next_fragment_id=base.next_fragment_id + 1000 * who)
            barrier.wait()
            try:
                store.publish(str(root), m)
                outcome[who] = "won"
            except CommitConflictError:
                outcome[who] = "lost"

        threads = [threading.Thread(target=publish, args=(who,)) for who in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcome.values()) == ["lost", "won"], (v, outcome)
        winner = next(w for w, o in outcome.items() if o == "won")
        got = store.read_manifest(str(root), v)
        assert got.next_fragment_id == base.next_fragment_id + 1000 * winner
    assert store.versions(str(root)) == list(range(1, 42))
    assert files_under(root) == live_files(root), "publish left temporary manifests"
    assert index.open(root).version == 41


def test_builds_without_progress_bar_never_wait_for_tqdm(tmp_path):
    """With progress off, build and refresh never touch tqdm (issue 18). Creating even a
    disabled tqdm bar takes tqdm's write lock, a semaphore that every process forked after
    its first use shares: a writer killed while it held it hung every later writer. Here
    another thread holds that lock for the whole build and refresh."""
    from tqdm import tqdm

    lake = Lake(tmp_path / "lake", seed=7)
    lake.populate(3)
    root = tmp_path / "index"
    lock, reports = tqdm.get_lock(), []

    def work() -> None:
        kw = {"zone_rows": ZONE_ROWS, "threads": THREADS, "progress": False}
        reports.append(index.build(lake.root, COLUMNS, root, **kw))
        lake.add()
        reports.append(index.refresh(root, threads=THREADS, progress=False))

    lock.acquire()
    try:
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(TIMEOUT_S)
        assert not worker.is_alive(), "a build without progress bar waited for tqdm's lock"
    finally:
        lock.release()
    worker.join(TIMEOUT_S)
    assert [r.version for r in reports] == [1, 2]
    check_answers(root, lake, lake.queries(random.Random(8)), fresh=True)
