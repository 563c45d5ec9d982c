"""A seeded fuzz of the ORC structure layer: small seed files
(:func:`tests.support.orc_files.small_files`) mutated byte by byte in their tails, stripe
footers and indexes (bits flipped, bytes inserted and cut, the file truncated) or
structurally (an integer of the PostScript, Footer or a stripe footer changed, dropped or
repeated through the generated protobuf classes, lengths and offsets kept consistent).
Every entry point must answer or raise a typed error naming the file, within a time
bound per case, in workers that must not die.
"""

from __future__ import annotations

import os
import random
import signal
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import pytest

from bloomskip.errors import BloomskipError
from bloomskip.orc import read_orc
from tests.support.orc_files import small_files as make_small_files
from tests.support.orc_files import walk
from tests.support.orc_wire import Seed, mutate

pytest.importorskip("pyorc")


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, bytes]:
    return make_small_files(tmp_path_factory.mktemp("orc-small"))


FUZZ_CASES = 2400
CASE_SECONDS = 2.0


class _Timeout(Exception):
    pass


class _Misnamed(Exception):
    pass


def fuzz_walk(data: bytes, label: str) -> tuple[int, int, int]:
    """Each entry point on its own: (operations that answered, typed errors, filters)."""
    counts = [0, 0, 0]

    def attempt(op):
        try:
            out = op()
            counts[0] += 1
            return out
        except BloomskipError as e:
            counts[1] += 1
            if not str(e).startswith(label):
                raise _Misnamed(str(e)) from None
            return None

    f = attempt(lambda: read_orc(data, name=label))
    if f is None:
        return counts[0], counts[1], counts[2]
    attempt(f.metadata)
    attempt(f.row_groups)
    for s in f.stripes:
        if attempt(lambda s=s: f.streams(s.index)) is None:
            continue
        for c in f.columns:
            attempt(lambda s=s, c=c: f.row_index(s.index, c.id))
            bf = attempt(lambda s=s, c=c: f.bloom_filters(s.index, c.id))
            counts[2] += bf is not None
    return counts[0], counts[1], counts[2]


def _on_alarm(signum, frame):
    raise _Timeout


def fuzz_batch(seeds: dict[str, bytes], start: int, cases: int, workdir: str) -> dict:
    """Cases ``start..start+cases`` (each a seed chosen and mutated by a seeded RNG)."""
    names = sorted(seeds)
    prepared = {n: Seed(seeds[n]) for n in names}
    signal.signal(signal.SIGALRM, _on_alarm)
    current = os.path.join(workdir, f"running-{start}.orc")
    problems: list[str] = []
    outcomes = {"ok": 0, "typed": 0, "filters": 0}
    for i in range(start, start + cases):
        rng = random.Random(f"orc-fuzz:{i}")
        name = rng.choice(names)
        data = mutate(prepared[name], rng)
        with open(current, "wb") as fh:
            fh.write(data)
        problem = None
        label = f"case-{i}.orc"
        began = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        try:
            ok, typed, filters = fuzz_walk(data, label)
            outcomes["ok"] += ok
            outcomes["typed"] += typed
            outcomes["filters"] += filters
        except _Misnamed as e:
            problem = f"error does not name the file: {e}"
        except _Timeout:
            problem = f"no answer within {CASE_SECONDS} s"
        except Exception as e:
            frames = traceback.extract_tb(e.__traceback__)[-3:]
            where = " <- ".join(f"{Path(fr.filename).name}:{fr.lineno}" for fr in frames[::-1])
            problem = f"{type(e).__name__}: {str(e)[:200]} at {where}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if problem is None and time.perf_counter() - began > CASE_SECONDS:
            problem = "slow"
        if problem:
            keep = os.path.join(workdir, f"failure-{i}.orc")
            Path(keep).write_bytes(data)
            problems.append(f"case {i} ({name}): {problem} [{keep}]")
    return {"cases": cases, "problems": problems, **outcomes}


def test_fuzz_mutated_files(small_files, tmp_path):
    """2,400 mutated seed files through every entry point, in two spawned workers: only
    results or typed errors naming the file, each within two seconds; a worker that dies
    leaves the case it was running on disk."""
    started = time.perf_counter()
    half = FUZZ_CASES // 2
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(fuzz_batch, small_files, start, half, str(tmp_path)) for start in (0, half)
        ]
        results, died = [], []
        for k, fut in enumerate(futures):
            try:
                results.append(fut.result(timeout=300))
            except BrokenProcessPool:
                died.append(str(tmp_path / f"running-{k * half}.orc"))
    assert not died, f"a fuzz worker died while running {died}"
    problems = [p for r in results for p in r["problems"]]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])
    ok = sum(r["ok"] for r in results)
    typed = sum(r["typed"] for r in results)
    filters = sum(r["filters"] for r in results)
    # the mutations reach past the first checks: many operations answer, many refuse,
    # and most cases still reach bloom filters
    assert ok > 5 * FUZZ_CASES and typed > FUZZ_CASES // 2 and filters > 3 * FUZZ_CASES
    elapsed = time.perf_counter() - started
    print(f"orc fuzz: {ok} answers, {typed} typed errors, {filters} filters in {elapsed:.1f} s")


def test_fuzz_is_reproducible(small_files):
    seed = Seed(small_files["pyorc-zstd"])
    a = [mutate(seed, random.Random(f"x{i}")) for i in range(40)]
    b = [mutate(seed, random.Random(f"x{i}")) for i in range(40)]
    # (two structural edits may meet: a field set to the value it had, or to one that
    # is then recomputed, leave only the re-serialized tail)
    assert a == b and len(set(a)) >= 38


def test_structural_edits_keep_files_consistent(small_files):
    """An edit that changes nothing in effect leaves a readable file: the splicing of
    stripe footers and tails is right, so the fuzz reaches deep."""
    for name in ("pyorc-zstd", "pyarrow-uncompressed", "pyorc-nested"):
        seed = Seed(small_files[name])
        readable = 0
        for i in range(60):
            try:
                walk(seed.edited(random.Random(f"{name}:{i}")))
                readable += 1
            except BloomskipError:
                pass
        assert readable > 10
