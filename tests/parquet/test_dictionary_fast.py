"""The dictionary stage's shortcuts answer as the long way does.

Pruning hashes a PLAIN ``BYTE_ARRAY`` dictionary page where its values lie
(``kernels.hash_byte_arrays``) instead of splitting it into Arrow buffers first, tests
the hashes against the looked-up values with ``kernels.any_in`` instead of a sort and a
binary search, and remembers the dictionary coverage of a chunk's ``encoding_stats`` /
``encodings`` bytes across row groups. Each is checked here against the long way: the
same hashes, the same refusals, the same answers and reasons.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.hashing.plain import VarBytes, hash_plain
from bloomskip.parquet import kernels, prune
from bloomskip.parquet.footer import read_footer


def plain_page(values: list[bytes]) -> np.ndarray:
    out = bytearray()
    for v in values:
        out += len(v).to_bytes(4, "little") + v
    return np.frombuffer(bytes(out), np.uint8)


def long_way(buf: np.ndarray, count: int) -> tuple[int, np.ndarray | None]:
    offsets = np.empty(count + 1, np.int64)
    data = np.empty(max(buf.size - 4 * count, 0), np.uint8)
    used = kernels.split_byte_arrays(buf, count, offsets, data)
    if used < 0:
        return used, None
    return used, hash_plain(VarBytes.trusted(offsets, data))


def test_hashing_in_place_matches_split_then_hash():
    rng = np.random.default_rng(5)
    for case in range(400):
        n = int(rng.integers(0, 120))
        values = [rng.bytes(int(rng.choice([0, 1, 7, 8, 31, 32, 36, 64, 200]))) for _ in range(n)]
        buf = plain_page(values)
        if case % 3 == 1 and buf.size:  # a corrupt page: one byte changed, or cut short
            buf = buf.copy()
            buf[int(rng.integers(0, buf.size))] = rng.integers(0, 256)
        elif case % 3 == 2 and buf.size:
            buf = buf[: int(rng.integers(0, buf.size))]
        for count in {n, max(n - 1, 0), n + 1}:
            if count > buf.size // 4:  # refused before either kernel runs
                continue
            used, expected = long_way(buf, count)
            out = np.empty(count, np.uint64)
            assert kernels.hash_byte_arrays(buf, count, out) == used, (case, count)
            if expected is not None:
                assert np.array_equal(out, expected), (case, count)


def test_any_in_matches_isin():
    rng = np.random.default_rng(9)
    for size in (0, 1, 5, 1000):
        hashes = rng.integers(0, 2**63, size, dtype=np.int64).astype(np.uint64)
        for k in (0, 1, 3, 16, 17, 64):
            probe = rng.integers(0, 2**63, k, dtype=np.int64).astype(np.uint64)
            if k and size and k % 2:
                probe[-1] = hashes[int(rng.integers(0, size))]
            expected = bool(np.isin(probe, hashes).any())
            assert bool(kernels.any_in(hashes, probe)) is expected, (size, k)


def test_row_groups_with_different_encodings_are_judged_each_by_its_own(tmp_path):
    """Row group 0 fits its dictionary, row group 1 falls back to PLAIN part way, row
    group 2 fits again: the coverage remembered from one must not answer for another."""
    few = [f"k{i % 7}" for i in range(2000)]
    many = [f"value-{i:08d}-" + "x" * 40 for i in range(2000)]
    path = tmp_path / "mixed.parquet"
    table = pa.table({"s": pa.array(few + many + few)})
    pq.write_table(table, path, row_group_size=2000, dictionary_pagesize_limit=4096,
                   data_page_size=1024)  # fmt: skip
    inside = "s IN ('k3x', 'value-00000500-y')"  # within every [min, max], absent
    present = "s = 'value-00001500-" + "x" * 40 + "'"
    for predicate in (inside, present, "s IN ('k3', 'zz')"):
        fast = prune(path, predicate)
        slow = prune(path, predicate, footer=read_footer(path))
        assert fast.to_json() == slow.to_json(), predicate
    units = prune(path, inside).units
    assert [u.may_match for u in units] == [False, True, False]
    assert "dictionary: not among its 7 values" in units[0].reason
    assert "dictionary" not in units[1].reason
    assert prune(path, present).units[1].may_match
