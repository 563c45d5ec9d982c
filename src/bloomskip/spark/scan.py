"""Reading a lake with Spark through a zone index: only the files that may match.

:func:`plan_read` asks the index which files may hold rows matching ``where`` and
returns a DataFrame over the source that leaves the others out of Spark's file listing,
with ``where`` itself still applied - so the rows are exactly those of
``spark.read.parquet(source).where(where)``.

How files are left out: Spark lists the source itself (``df.inputFiles()``); a file is
left out only when the index *ruled it out* - listed by the index's own look at the
source, unchanged since indexing, and excluded by its filters - and the DataFrame gets
``NOT _metadata.file_path IN (those files)``, which Spark applies while listing (the
skipped files are never opened). Every other file is read: candidates, files added or
rewritten since indexing, files Spark lists that the index did not see. The path form
is Spark's own (``file:/dir/a%20b.parquet``), taken from Spark's listing, so a file
named in another form can only be read needlessly, never dropped.

When the index cannot answer - missing or unreadable, a predicate it cannot parse - the
DataFrame reads every file, and :attr:`ReadPlan.notes` says why.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from bloomskip.errors import BloomskipError
from bloomskip.expr.sql import parse
from bloomskip.index import store
from bloomskip.index.query import MAX_IN_FPP, QueryResult, ZoneIndex, open_index
from bloomskip.spark.session import require_pyspark
from bloomskip.units import human_bytes

log = logging.getLogger("bloomskip.spark")

_TRIPLE_SLASH = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):///")


@dataclass
class ReadPlan:
    """A DataFrame over the files that may match, and what was skipped and why."""

    df: Any  # pyspark.sql.DataFrame
    where: str
    source: str
    index: str
    files_total: int = 0
    files_skipped: int = 0
    bytes_total: int = 0
    bytes_skipped: int = 0
    zones_total: int = 0
    zones_candidate: int = 0
    read_reasons: dict[str, int] = field(default_factory=dict)  # why files are read
    skip_reasons: dict[str, int] = field(default_factory=dict)  # why files are skipped
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # Spark paths left out
    query: QueryResult | None = None
    seconds: float = 0.0  # planning: the index query and Spark's listing

    @property
    def files_read(self) -> int:
        return self.files_total - self.files_skipped

    @property
    def bytes_read(self) -> int:
        return self.bytes_total - self.bytes_skipped

    def summary(self) -> str:
        """One paragraph: what is read, what is skipped and why."""
        text = (
            f"bloomskip: reading {self.files_read:,} of {self.files_total:,} files "
            f"({human_bytes(self.bytes_read)} of {human_bytes(self.bytes_total)})"
        )
        if self.zones_total:
            text += f"; {self.zones_candidate:,} of {self.zones_total:,} zones may match"
        if self.skip_reasons:
            why = ", ".join(f"{r} ({n:,})" for r, n in self.skip_reasons.items())
            text += f"; skipped: {why}"
        if self.read_reasons:
            why = ", ".join(f"{r} ({n:,})" for r, n in self.read_reasons.items())
            text += f"; read: {why}"
        text += f"; planned in {self.seconds * 1000:.0f} ms"
        for note in self.notes:
            text += f"\n  note: {note}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "source": self.source,
            "index": self.index,
            "files_total": self.files_total,
            "files_read": self.files_read,
            "files_skipped": self.files_skipped,
            "bytes_total": self.bytes_total,
            "bytes_read": self.bytes_read,
            "bytes_skipped": self.bytes_skipped,
            "zones_total": self.zones_total,
            "zones_candidate": self.zones_candidate,
            "read_reasons": self.read_reasons,
            "skip_reasons": self.skip_reasons,
            "notes": self.notes,
            "seconds": round(self.seconds, 6),
        }


def read(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    index_path: str | os.PathLike,
    where: str,
    **kwargs: Any,
):
    """A DataFrame of the rows of ``source`` matching ``where`` that opens only the files
    the index at ``index_path`` cannot rule out (see :func:`plan_read`)."""
    return plan_read(spark, source, index_path, where, **kwargs).df


def plan_read(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    index_path: str | os.PathLike,
    where: str,
    *,
    format: str | None = None,
    options: Mapping[str, Any] | None = None,
    schema: Any = None,
    max_in_fpp: float = MAX_IN_FPP,
) -> ReadPlan:
    """Plan a read of ``source`` (read as ``format``, by default the index's: parquet or
    orc) for the Spark SQL predicate ``where``; ``options`` and ``schema`` go to Spark's
    reader. The plan's ``df`` equals ``spark.read.format(format).load(source)
    .where(where)`` row for row; ``summary()`` says what it skips and why.

    For many queries over one lake, :func:`open_lake` once and ``plan`` each query: the
    schema is then inferred once, not per query."""
    lake = IndexedLake(spark, source, index_path, format=format, options=options, schema=schema)
    return lake.plan(where, max_in_fpp=max_in_fpp)


def open_lake(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    index_path: str | os.PathLike,
    *,
    format: str | None = None,
    options: Mapping[str, Any] | None = None,
    schema: Any = None,
) -> IndexedLake:
    """A lake and its index, opened for many queries (:meth:`IndexedLake.plan`,
    :meth:`IndexedLake.read`). Spark infers the schema here, once (unless ``schema`` is
    given), as a catalog table holds one; every query lists the files afresh, so files
    added, rewritten or deleted since are seen."""
    return IndexedLake(spark, source, index_path, format=format, options=options, schema=schema)


class IndexedLake:
    """A source read through Spark with a zone index; see :func:`open_lake`."""

    def __init__(
        self,
        spark,
        source: str | os.PathLike | Sequence[str | os.PathLike],
        index_path: str | os.PathLike,
        *,
        format: str | None = None,
        options: Mapping[str, Any] | None = None,
        schema: Any = None,
    ) -> None:
        require_pyspark()
        paths = [source] if isinstance(source, str | os.PathLike) else list(source)
        self.spark = spark
        self.paths = [os.fspath(p) for p in paths]
        self.index_path = os.fspath(index_path)
        self.options = {k: str(v) for k, v in (options or {}).items()}
        self.schema = schema
        self._format = format

    def _index(self, notes: list[str]) -> ZoneIndex | None:
        try:
            return _open(self.index_path)
        except (BloomskipError, OSError) as e:
            notes.append(f"index not used: {e}")
            return None

    def _dataframe(self, fmt: str):
        reader = self.spark.read.format(fmt).options(**self.options)
        if self.schema is not None:
            reader = reader.schema(self.schema)
        df = reader.load(self.paths[0] if len(self.paths) == 1 else self.paths)
        if self.schema is None:  # inferred once: a query with a schema only lists files
            self.schema = df.schema
        return df

    def read(self, where: str, **kwargs: Any):
        """The DataFrame of :meth:`plan`."""
        return self.plan(where, **kwargs).df

    def plan(self, where: str, *, max_in_fpp: float = MAX_IN_FPP) -> ReadPlan:
        """The rows matching the Spark SQL predicate ``where``, from only the files the
        index cannot rule out, and what was skipped and why."""
        t0 = time.perf_counter()
        notes: list[str] = []
        index = self._index(notes)
        fmt = self._format or (_index_format(index) if index is not None else "parquet")
        df = self._dataframe(fmt)
        plan = ReadPlan(df, where, ", ".join(self.paths), self.index_path, notes=notes)
        listed = df.inputFiles()
        plan.files_total = len(listed)
        result = None
        if index is not None:
            try:
                result = index.query(parse(where, dialect="spark"), max_in_fpp=max_in_fpp)
            except (BloomskipError, OSError) as e:
                notes.append(f"index not used: {e}")
        if result is not None:
            plan.query = result
            _prune(plan, listed, result, index)
        if plan.skipped:  # one SQL text: a Column.isin makes a JVM call per path
            quoted = ", ".join(_sql_string(p) for p in plan.skipped)
            df = df.where(f"NOT _metadata.file_path IN ({quoted})")
        plan.df = df.where(where)
        plan.seconds = time.perf_counter() - t0
        log.info("%s", plan.summary())
        return plan


def _sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal. Were backslashes not escapes in this
    session (``spark.sql.parser.escapedStringLiterals``), a path holding one would not
    match, and the file would be read needlessly - never dropped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _prune(plan: ReadPlan, listed: list[str], result: QueryResult, index) -> None:
    """Fill the plan: which of Spark's files the index ruled out, and the tallies."""
    plan.notes.extend(result.notes)
    plan.zones_total, plan.zones_candidate = result.zones_total, result.zones_candidate
    ruled_out = {_key(p): why for p, why in result.skipped}
    candidates = {_key(f.path): f for f in result.files}
    sizes = {_key(p): n for p, n in result.sizes.items()}
    skip, read = Counter(), Counter()
    for uri in listed:
        k = _key(uri)
        plan.bytes_total += sizes.get(k, 0)
        why = ruled_out.get(k)
        if why is not None:
            plan.skipped.append(_TRIPLE_SLASH.sub(r"\1:/", uri))
            plan.bytes_skipped += sizes.get(k, 0)
            skip[why] += 1
        elif k in candidates:
            c = candidates[k]
            read["zones may match" if c.zones is not None else c.reason] += 1
        else:
            read["not seen by the index"] += 1
    plan.files_skipped = len(plan.skipped)
    plan.skip_reasons, plan.read_reasons = dict(skip), dict(read)
    if read.get("not seen by the index") == len(listed) and listed:
        plan.notes.append(
            f"no file Spark lists is known to the index (it indexes {index.source.uri}): "
            "every file is read"
        )


_OPENED: OrderedDict[tuple[str, int], ZoneIndex] = OrderedDict()
_OPENED_MAX = 4


def _open(index_path: str | os.PathLike) -> ZoneIndex:
    """The latest version of the index, kept open between reads: its zone filters are
    loaded once per version, not once per query."""
    root = store.local_dir(index_path)
    found = store.versions(root)
    if not found:
        return open_index(root)  # raises IndexNotFoundError, naming the directory
    key = (root, found[-1])
    zi = _OPENED.get(key)
    if zi is None:
        zi = _OPENED[key] = open_index(root, version=found[-1])
        while len(_OPENED) > _OPENED_MAX:
            _OPENED.popitem(last=False)
    _OPENED.move_to_end(key)
    return zi


def _key(path: str) -> str:
    """A path or URI as a comparable key: no scheme, decoded, no leading slashes."""
    if "://" in path or path.startswith("file:"):
        parts = urlsplit(path)
        return (parts.netloc + unquote(parts.path)).lstrip("/")
    return os.path.abspath(path).lstrip("/")


def _index_format(index) -> str:
    formats = set(index.fragments().column("format").to_pylist())
    return "orc" if formats == {"orc"} else "parquet"


__all__ = ["IndexedLake", "ReadPlan", "open_lake", "plan_read", "read"]
