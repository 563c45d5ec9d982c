"""add-bloom never loses a newer file and never leaves its temporary file (issue 17).

* **Lost updates.** Another writer replaces (or rewrites, or deletes) the source while
  ``add_bloom_filters`` runs - at a point made deterministic by a hook on a function it
  calls mid-way: it raises :class:`FileChangedError` naming the file, the newer file is
  kept byte for byte, and no temporary file is left. Readers opened after the path
  changed refuse the other file (filters must describe the pages they are written with).
* **Signals.** SIGTERM, SIGHUP and SIGINT delivered to a ``bloomskip add-bloom`` process
  paused mid-write (the hook writes a flag file, then waits; the test signals once the
  flag is there), in the main thread or while the main thread waits for a worker: exit
  ``128 + signal``, one line on stderr and no traceback, no temporary file, the source
  intact. SIGKILL leaves the temporary file (nothing can remove it) and the source
  intact; the next run sweeps the file once it is older than the threshold.
* **The copy** of the pages, on a thread of its own, uses no file position (the caller
  writes after it meanwhile) and reports a source shorter than expected.
* **The sweep** removes only our stale temporary files of the same target: regular files
  named exactly ``.NAME.<8 chars>.bloomskip.tmp``, never a symbolic link (nor what it
  points to), a directory, a younger file, or any other name.

No timing assertion anywhere; every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bloomskip
import bloomskip.parquet.write as write
from bloomskip import replace
from bloomskip.errors import FileChangedError, Interrupted
from bloomskip.parquet import add_bloom_filters
from bloomskip.parquet.bloom import read_bloom_filters

TIMEOUT_S = 180
HOUR = 3600


def _table(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "k": pa.array(rng.integers(0, 2**62, rows), pa.int64()),
            "s": pa.array([f"v{seed}-{i}" for i in range(rows)]),
        }
    )


@pytest.fixture
def src(tmp_path) -> Path:
    d = tmp_path / "lake"
    d.mkdir()
    path = d / "src.parquet"
    pq.write_table(_table(4000, seed=1), path, row_group_size=1000)
    return path


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def temporaries(directory: Path) -> list[str]:
    return [n for n in listing(directory) if n.endswith(replace.TEMP_SUFFIX)]


def _newer(path: Path) -> bytes:
    """Write a newer version of ``path`` by rename (as a writer would); its bytes."""
    tmp = path.with_name("writer.tmp")
    pq.write_table(_table(3000, seed=2), tmp, row_group_size=1000)
    os.replace(tmp, path)
    return path.read_bytes()


def _hook(monkeypatch, name: str, action) -> dict:
    """Run ``action()`` once, before the first call of ``write.<name>``."""
    real = getattr(write, name)
    state = {"done": False, "value": None}

    def hooked(*args, **kwargs):
        if not state["done"]:
            state["done"] = True
            state["value"] = action()
        return real(*args, **kwargs)

    monkeypatch.setattr(write, name, hooked)
    return state


# ----------------------------------------------------------------------------- lost updates


@pytest.mark.parametrize("when", ["_write_filter", "_write_footer"])
def test_a_newer_file_is_never_overwritten(src, monkeypatch, when):
    state = _hook(monkeypatch, when, lambda: _newer(src))
    with pytest.raises(FileChangedError, match=r"src\.parquet.*another file was put in its place"):
        add_bloom_filters(src, columns=["k", "s"])
    assert state["done"]
    assert src.read_bytes() == state["value"]  # the newer file, byte for byte
    assert listing(src.parent) == ["src.parquet"]


def test_a_file_rewritten_in_place_is_never_overwritten(src, monkeypatch):
    def append() -> bytes:
        with open(src, "ab") as fh:
            fh.write(b"more")
        return src.read_bytes()

    state = _hook(monkeypatch, "_write_footer", append)
    with pytest.raises(FileChangedError, match="size changed"):
        add_bloom_filters(src, columns=["k"])
    assert src.read_bytes() == state["value"]
    assert listing(src.parent) == ["src.parquet"]


def test_a_same_size_rewrite_is_seen_by_its_mtime(src, monkeypatch):
    def touch() -> bytes:
        st = os.stat(src)
        os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        return src.read_bytes()

    _hook(monkeypatch, "_write_footer", touch)
    with pytest.raises(FileChangedError, match="modified"):
        add_bloom_filters(src, columns=["k"])
    assert listing(src.parent) == ["src.parquet"]


def test_a_deleted_file_is_not_brought_back(src, monkeypatch):
    _hook(monkeypatch, "_write_footer", lambda: os.unlink(src))
    with pytest.raises(FileChangedError, match="deleted or renamed"):
        add_bloom_filters(src, columns=["k"])
    assert listing(src.parent) == []


def test_readers_refuse_a_file_put_in_place_before_they_open(src, monkeypatch):
    # The footer was read from the first file; pages from another would give filters
    # that do not describe the file written - with a destination too.
    state = _hook(monkeypatch, "_append_filters", lambda: _newer(src))
    dst = src.parent / "out.parquet"
    with pytest.raises(FileChangedError, match="another file was put in its place"):
        add_bloom_filters(src, dst, columns=["s"])
    assert src.read_bytes() == state["value"]
    assert listing(src.parent) == ["src.parquet"]


def test_a_source_rewritten_while_copied_to_dst_is_refused(src, monkeypatch):
    # Written to in place (same inode): the copy may hold bytes of both versions.
    def rewrite() -> None:
        with open(src, "ab") as fh:
            fh.write(b"x")

    _hook(monkeypatch, "_write_footer", rewrite)
    dst = src.parent / "out.parquet"
    with pytest.raises(FileChangedError, match=r"src\.parquet.*size changed"):
        add_bloom_filters(src, dst, columns=["k"])
    assert listing(src.parent) == ["src.parquet"]


def test_an_unchanged_file_is_replaced(src):
    result = add_bloom_filters(src, columns=["k", "s"])
    assert result.rewritten and result.filters_added == {"k": 4, "s": 4}
    assert len(read_bloom_filters(src, columns=["k"])) == 4
    assert listing(src.parent) == ["src.parquet"]


def test_file_changed_is_a_one_line_cli_error(src, monkeypatch, capsys):
    from bloomskip.cli import main

    _hook(monkeypatch, "_write_footer", lambda: _newer(src))
    assert main(["add-bloom", str(src), "-c", "k"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bloomskip: error: ")
    assert "changed while bloomskip was working on it" in err


def test_identity_changes_are_named():
    base = replace.FileIdentity(1, 2, 100, 5)
    assert base.change(base) is None
    assert "another file" in base.change(replace.FileIdentity(1, 3, 100, 5))
    assert "another file" in base.change(replace.FileIdentity(9, 2, 100, 5))
    assert "100 B to 120 B" in base.change(replace.FileIdentity(1, 2, 120, 5))
    assert "modified" in base.change(replace.FileIdentity(1, 2, 100, 6))


# ----------------------------------------------------------------------------- the sweep


def _temp_name(target: str, random_part: str = "abcd_123") -> str:
    return f".{target}.{random_part}{replace.TEMP_SUFFIX}"


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)


def test_the_sweep_removes_only_our_stale_temporaries(src):
    d = src.parent
    stale = d / _temp_name("src.parquet")
    young = d / _temp_name("src.parquet", "young123")
    other_target = d / _temp_name("other.parquet")
    wrong_length = d / _temp_name("src.parquet", "abc")
    no_dot = d / _temp_name("src.parquet")[1:]
    elsewhere = d.parent / "precious.bin"
    link = d / _temp_name("src.parquet", "symlink1")
    folder = d / _temp_name("src.parquet", "folder12")
    for p in (stale, young, other_target, wrong_length, no_dot, elsewhere):
        p.write_bytes(b"x" * 10)
    os.symlink(elsewhere, link)
    folder.mkdir()
    for p in (stale, other_target, wrong_length, no_dot, elsewhere, link, folder):
        _age(p, 2 * HOUR)

    add_bloom_filters(src, columns=["k"])

    assert not stale.exists()
    for kept in (young, other_target, wrong_length, no_dot, folder):
        assert kept.exists(), kept.name
    assert os.path.islink(link) and elsewhere.read_bytes() == b"x" * 10


def test_the_sweep_pattern_matches_the_temporary_files_made(tmp_path):
    target = tmp_path / "t.parquet"
    names = []
    for _ in range(20):
        with replace.atomic_path(str(target), mode_from=None) as tmp:
            names.append(os.path.basename(tmp))
    assert all(replace.temp_pattern("t.parquet").fullmatch(n) for n in names), names
    assert not replace.temp_pattern("t").fullmatch(names[0])


def test_the_sweep_threshold_is_a_parameter(tmp_path):
    stale = tmp_path / _temp_name("t.bin")
    stale.write_bytes(b"")
    _age(stale, 120)
    assert replace.sweep_stale(str(tmp_path), "t.bin", stale_after=HOUR) == []
    assert replace.sweep_stale(str(tmp_path), "t.bin", stale_after=60) == [stale.name]
    assert listing(tmp_path) == []


def test_a_missing_directory_sweeps_nothing(tmp_path):
    assert replace.sweep_stale(str(tmp_path / "nope"), "t.bin") == []


# ----------------------------------------------------------------------------- signals

# Runs ``bloomskip add-bloom`` with a hook: the first call of write.<where> writes the
# flag file, then waits (at most TIMEOUT_S) until the release file exists; a signal
# arriving meanwhile interrupts it. "_write_filter" runs on the main thread,
# "chunk_hashes" on a worker while the main thread waits for it.
CHILD = r"""
import os, signal, sys, time
import bloomskip.parquet.write as write
from bloomskip.cli import main

# As in a terminal, whatever the test runner inherited (a shell's background job has
# SIGINT ignored, and an ignored signal is respected).
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_DFL)

flag, release, where, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
real = getattr(write, where)
state = {"paused": False}

def paused(*args, **kwargs):
    if not state["paused"]:
        state["paused"] = True
        open(flag, "w").close()
        deadline = time.monotonic() + timeout
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.01)
    return real(*args, **kwargs)

setattr(write, where, paused)
sys.exit(main(sys.argv[5:]))
"""


def _start(src: Path, control: Path, where: str) -> subprocess.Popen:
    env = dict(os.environ)
    code_root = str(Path(bloomskip.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (code_root, env.get("PYTHONPATH")) if p)
    argv = [str(control / "flag"), str(control / "release"), where, str(TIMEOUT_S)]
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *argv, "add-bloom", str(src), "-c", "k", "-c", "s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_paused(proc: subprocess.Popen, flag: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not flag.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate(timeout=TIMEOUT_S)
            pytest.fail(f"add-bloom never reached the hook (exit {proc.returncode}): {err}")
        time.sleep(0.01)


@pytest.fixture
def big_src(tmp_path) -> Path:
    d = tmp_path / "lake"
    d.mkdir()
    path = d / "src.parquet"
    pq.write_table(_table(200_000, seed=3), path, row_group_size=25_000)
    return path


@pytest.mark.parametrize("where", ["_write_filter", "chunk_hashes"])
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_mid_write_removes_the_temporary_file(big_src, tmp_path, signame, where):
    signum = getattr(signal, signame)
    control = tmp_path / "control"
    control.mkdir()
    before = big_src.read_bytes()
    proc = _start(big_src, control, where)
    try:
        _wait_paused(proc, control / "flag")
        assert len(temporaries(big_src.parent)) == 1  # mid-write: its temporary file exists
        proc.send_signal(signum)
        (control / "release").touch()  # a paused worker may go on; the main thread stops
        out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=TIMEOUT_S)
    expected = "interrupted" if signum == signal.SIGINT else f"interrupted by {signame}"
    assert proc.returncode == 128 + signum, err
    assert err == f"bloomskip: {expected}\n"  # one line, no traceback
    assert out == ""
    assert listing(big_src.parent) == ["src.parquet"]
    assert big_src.read_bytes() == before


def test_sigkill_leaves_the_source_and_the_next_run_sweeps(big_src, tmp_path):
    control = tmp_path / "control"
    control.mkdir()
    before = big_src.read_bytes()
    proc = _start(big_src, control, "_write_filter")
    try:
        _wait_paused(proc, control / "flag")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == -signal.SIGKILL
    left = temporaries(big_src.parent)
    assert len(left) == 1 and left[0].startswith(".src.parquet.")  # nothing can remove it
    assert big_src.read_bytes() == before

    add_bloom_filters(big_src, columns=["k"])  # younger than the threshold: kept
    assert temporaries(big_src.parent) == left
    _age(big_src.parent / left[0], 2 * HOUR)
    result = add_bloom_filters(big_src, columns=["s"])  # stale now: swept
    assert result.filters_added == {"s": 8}
    assert listing(big_src.parent) == ["src.parquet"]


# ----------------------------------------------------------------------------- in-process


def test_signal_handlers_are_restored(src):
    before = {s: signal.getsignal(s) for s in replace.SIGNALS}
    add_bloom_filters(src, columns=["k"])
    assert {s: signal.getsignal(s) for s in replace.SIGNALS} == before


def test_handlers_of_the_application_are_left_alone(src, monkeypatch):
    calls = []
    monkeypatch.setattr(signal, "signal", lambda *a: calls.append(a))
    monkeypatch.setattr(signal, "getsignal", lambda s: signal.SIG_IGN)  # e.g. under nohup
    add_bloom_filters(src, columns=["k"])
    assert calls == []


needs_default_handlers = pytest.mark.skipif(
    any(signal.getsignal(s) is not signal.SIG_DFL for s in (signal.SIGTERM, signal.SIGHUP)),
    reason="SIGTERM/SIGHUP have handlers in this process: raising them here is not safe",
)


def _signal_after(monkeypatch, module, name: str, signum: int, when=lambda *a: True) -> None:
    real = getattr(module, name)

    def call_then_signal(*args, **kwargs):
        out = real(*args, **kwargs)
        if when(*args):
            # Never raise a signal nobody handles: it would end the test run.
            assert signal.getsignal(signum) is not signal.SIG_DFL, "no handler installed"
            signal.raise_signal(signum)
        return out

    monkeypatch.setattr(module, name, call_then_signal)


@needs_default_handlers
def test_a_signal_before_the_rename_keeps_the_source(src, monkeypatch):
    before = src.read_bytes()
    _signal_after(
        monkeypatch, replace, "fsync_path", signal.SIGHUP, lambda p, f: p.endswith(".tmp")
    )
    with pytest.raises(Interrupted, match="SIGHUP"):
        add_bloom_filters(src, columns=["k"])
    assert src.read_bytes() == before
    assert listing(src.parent) == ["src.parquet"]


@needs_default_handlers
def test_a_signal_during_the_check_keeps_the_source(src, monkeypatch):
    # Held back during the check, then raised before the rename: nothing replaced.
    before = src.read_bytes()
    _signal_after(monkeypatch, replace, "require_unchanged", signal.SIGTERM)
    with pytest.raises(Interrupted) as caught:
        add_bloom_filters(src, columns=["k"])
    assert caught.value.signum == signal.SIGTERM
    assert src.read_bytes() == before
    assert listing(src.parent) == ["src.parquet"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@needs_default_handlers
def test_a_signal_during_the_rename_is_raised_after_it(src, monkeypatch):
    # The rename is done whole (the file has its filters), and the signal is not lost.
    _signal_after(
        monkeypatch, replace.os, "replace", signal.SIGTERM, lambda a, b: a.endswith(".tmp")
    )
    with pytest.raises(Interrupted, match="SIGTERM"):
        add_bloom_filters(src, columns=["k"])
    monkeypatch.undo()
    assert len(read_bloom_filters(src, columns=["k"])) == 4
    assert listing(src.parent) == ["src.parquet"]


def test_a_call_from_another_thread_works_without_handlers(src):
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = add_bloom_filters(src, columns=["k", "s"])
        except BaseException as e:  # reported to the test below
            outcome["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(TIMEOUT_S)
    assert not t.is_alive() and "error" not in outcome
    assert outcome["result"].filters_added == {"k": 4, "s": 4}
    assert listing(src.parent) == ["src.parquet"]


# ----------------------------------------------------------------------------- the copy


@pytest.mark.parametrize("kernel_copy", [True, False])
def test_the_background_copy_leaves_positions_alone(tmp_path, monkeypatch, kernel_copy):
    if not kernel_copy:
        monkeypatch.setattr(replace.os, "copy_file_range", _unsupported, raising=False)
    data = os.urandom(3 * 1024 * 1024 + 5)
    (tmp_path / "a").write_bytes(data)
    with open(tmp_path / "a", "rb") as src, open(tmp_path / "b", "w+b") as dst:
        dst.seek(len(data))
        with replace.BackgroundCopy(src, dst, len(data), "a") as copy:
            dst.write(b"tail")  # the caller writes after the prefix meanwhile
            copy.wait()
    assert (tmp_path / "b").read_bytes() == data + b"tail"


@pytest.mark.parametrize("kernel_copy", [True, False])
def test_a_short_source_fails_the_copy(tmp_path, monkeypatch, kernel_copy):
    from bloomskip.errors import CorruptFileError

    if not kernel_copy:
        monkeypatch.setattr(replace.os, "copy_file_range", _unsupported, raising=False)
    (tmp_path / "a").write_bytes(b"x" * 100)
    with (
        open(tmp_path / "a", "rb") as src,
        open(tmp_path / "b", "w+b") as dst,
        pytest.raises(CorruptFileError, match="ended at byte 100"),
        replace.BackgroundCopy(src, dst, 200, "a") as copy,
    ):
        copy.wait()


def _unsupported(*args):
    raise OSError(38, "copy_file_range not supported")
