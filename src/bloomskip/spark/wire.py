"""What an index task returns to the driver: one Arrow row per task, and back.

A Spark task runs :func:`bloomskip.index.parts.run_task` on its files: it writes the
files' parts to the index's storage itself and returns a
:class:`~bloomskip.index.parts.TaskResult` - per file its row count or error, per column
the part names and a few bytes per zone. No filter travels. The result is pickled into
one row of :data:`WIRE_SCHEMA` (the task's number, and the result).

:func:`decode` trusts nothing it did not plan: a task that returned nothing, a result that
names other files than the task had, or zones that do not make one whole file (missing,
duplicated, or not tiling its rows) leave those files unindexed - every query keeps them
as candidates. Spark keeps one successful attempt per task, so that should never happen.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from bloomskip.index.parts import FileResult, TaskResult
from bloomskip.sources import SourceFile

WIRE_SCHEMA = pa.schema([("task", pa.int64()), ("result", pa.large_binary())])


def encode(task: int, result: TaskResult) -> pa.RecordBatch:
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    return pa.RecordBatch.from_arrays(
        [pa.array([task], pa.int64()), pa.array([data], pa.large_binary())], schema=WIRE_SCHEMA
    )


def decode(
    table: pa.Table, tasks: Sequence[Sequence[tuple[SourceFile, int]]], *, tiled: bool = True
) -> list[TaskResult]:
    """Each planned task's result, checked against its plan. ``tiled``: a file's zones must
    cover its rows exactly (a Lance fragment's zones may skip deleted rows)."""
    table = table.select(WIRE_SCHEMA.names).cast(WIRE_SCHEMA)
    got: dict[int, TaskResult] = {}
    for task, data in zip(
        table.column("task").to_pylist(), table.column("result").to_pylist(), strict=True
    ):
        if task is not None and 0 <= task < len(tasks) and task not in got:
            got[task] = pickle.loads(data)
    out = []
    for i, planned in enumerate(tasks):
        result = got.get(i)
        if result is None:
            out.append(_failed(planned, "its Spark task returned nothing"))
            continue
        out.append(check(result, planned, tiled=tiled))
    return out


def check(
    result: TaskResult, planned: Sequence[tuple[SourceFile, int]], *, tiled: bool
) -> TaskResult:
    """``result`` with every file whose output does not hold together marked failed."""
    want = {(f.identity, fid) for f, fid in planned}
    have = {(r.file.identity, r.fragment_id) for r in result.files}
    if want != have or len(result.files) != len(planned):
        return _failed(planned, "inconsistent task output: not the files it was given")
    for r in result.files:
        if r.error is not None:
            continue
        for name, part in result.columns.items():
            if name in r.column_errors:
                continue
            mine = part.fragment == np.uint64(r.fragment_id)
            start = (part.keys[mine] & np.uint64((1 << 40) - 1)).astype(np.int64)
            length = part.lengths[mine].astype(np.int64)
            order = np.argsort(start)
            start, length = start[order], length[order]
            ends = start + length
            if (start.size and np.any(start[1:] < ends[:-1])) or (
                tiled
                and (
                    (
                        start.size
                        and (
                            start[0] != 0
                            or ends[-1] != r.num_rows
                            or np.any(start[1:] != ends[:-1])
                        )
                    )
                    or (not start.size and r.num_rows)
                )
            ):
                r.error = f"inconsistent task output: {name}: zones do not cover the file's rows"
    return result


def _failed(planned: Sequence[tuple[SourceFile, int]], why: str) -> TaskResult:
    return TaskResult([FileResult(f, fid, 0, "unknown", why) for f, fid in planned], {})


__all__ = ["WIRE_SCHEMA", "check", "decode", "encode"]
