"""Which writers' bloom filters and statistics bloomskip trusts, column by column.

ORC writers have hashed some types wrongly, or written statistics that do not bound the
values, in known versions; a reader that trusted them would skip row groups holding
matches. The rules here decide from the writer id (``Footer.writer``), the writer version
(``PostScript.writer_version``, ORC Java's ``WriterVersion``), the software version
(``Footer.software_version``), the calendar and the file format version (fields of
``orc_proto.proto``, apache/orc-format); each rule says the bug or fix it follows:

* :func:`bloom_policy` - whether a column's bloom filters may be used at all;
* :func:`readers_ignore_filters` - whether ORC's own readers ignore every filter of a file;
* :func:`legacy_policy` - whether a legacy ``BLOOM_FILTER`` stream can answer for given
  literals;
* :func:`statistics_policy` - whether a column's min/max statistics may be used;
* :data:`CALENDAR_SAFE_DAY` - dates and timestamps before it are in doubt in a file not
  written in the proleptic Gregorian calendar.

Each returns the reason not to trust, or None.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from bloomskip.orc.types import BINARY, BOOLEAN, BYTE, CHAR, DECIMAL, FLOAT, TEXT, TIMESTAMPS

if TYPE_CHECKING:
    from bloomskip.orc.file import OrcFile
    from bloomskip.orc.schema import OrcColumn

JAVA, CPP = 0, 1
#: ``PostScript.writer_version`` fixes (ORC Java's ``WriterVersion``).
HIVE_8732, HIVE_12055, ORC_101, ORC_135 = 1, 3, 5, 6
#: ORC C++ versions whose numeric filters are wrong (ORC-1024), as ORC's readers list them.
BAD_CPP_VERSIONS = frozenset({(1, 6, i) for i in range(12)} | {(1, 7, 0)})
PROLEPTIC_GREGORIAN = 2
#: First day on which the hybrid Julian/Gregorian and proleptic Gregorian calendars agree
#: for every zone (1582-10-15, plus a day of margin for zone offsets).
CALENDAR_SAFE_DAY = (dt.date(1582, 10, 16) - dt.date(1970, 1, 1)).days


def _version(text: str | None) -> tuple[int, ...] | None:
    """``"1.6.11"`` / ``"2.2.2-SNAPSHOT"`` -> (1, 6, 11); None if absent or unreadable."""
    if not text:
        return None
    parts = text.split("-", 1)[0].split(".")
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return None


def bloom_policy(orc: OrcFile, col: OrcColumn) -> str | None:
    """Why the bloom filters of ``col`` in ``orc`` must not be used, or None.

    ======================  ===============================================================
    every writer            no row index (stride 0); encrypted files; BOOLEAN (Java adds
                            nothing, C++ hashes clobbered bytes); lists, maps, unions and
                            what is inside them; types bloomskip cannot hash
    ORC Java (writer 0)     TIMESTAMP before ORC-135 (writer version 6); DECIMAL in the
                            "UNSTABLE-PRE-2.0" format (hashed as unscaled longs)
    ORC C++ (writer 1)      all filters when the software version is missing, 1.6.0 to
                            1.6.11 or 1.7.0 (ORC-1024, numbers hashed with logical
                            shifts); BYTE (hashes the array it compacted in place); FLOAT
                            (hashes the double it was given, not the float it stores);
                            CHAR (hashes the unpadded buffer); BINARY before 1.7.0
                            (ORC-773: nothing added)
    other writers           not used: Presto, Trino, Go and cuDF filters are unverified
    ======================  ===============================================================
    """
    w = orc.writer
    writer = JAVA if w.writer is None else w.writer
    if orc.row_index_stride == 0:
        return "no row index, so no bloom filters"
    if orc.encrypted:
        return "encrypted file: bloom filters not read"
    if col.nested:
        return f"inside a {col.nested}"
    if col.kind == BOOLEAN:
        return "BOOLEAN filters are never trusted (ORC Java adds nothing, ORC C++ corrupts them)"
    if col.orc_type is None:
        return f"no bloom filter test for ORC {col.kind_name} columns"
    if writer == JAVA:
        version = w.writer_version or 0
        if col.kind in TIMESTAMPS and version < ORC_135:
            return f"TIMESTAMP filters before ORC-135 (writer version {version}) are not UTC-based"
        if col.kind == DECIMAL and w.file_version[:2] == (1, 9999):
            return "DECIMAL filters of the UNSTABLE-PRE-2.0 format hash unscaled longs"
        return None
    if writer == CPP:
        ignored = readers_ignore_filters(orc)
        if ignored is not None:
            return ignored
        v = _version(w.software_version)
        assert v is not None
        if col.kind == BYTE:
            return "ORC C++ BYTE filters are corrupted (values hashed after in-place compaction)"
        if col.kind == FLOAT:
            return "ORC C++ FLOAT filters hash the double given to the writer, not the stored float"
        if col.kind == CHAR:
            return "ORC C++ CHAR filters hash the unpadded value, not the stored one"
        if col.kind == BINARY and v < (1, 7, 0):
            return f"ORC C++ {w.software_version} added no BINARY values to filters (ORC-773)"
        return None
    return f"bloom filters from {w.writer_name} are not verified by bloomskip"


def readers_ignore_filters(orc: OrcFile) -> str | None:
    """Why ORC's own readers (Java and C++) ignore every bloom filter of ``orc``, or None:
    ORC C++ files without a software version or from 1.6.0 to 1.6.11 or 1.7.0, whose
    numeric filters are wrong (ORC-1024; ``RecordReaderImpl.hasBadBloomFilters``)."""
    w = orc.writer
    if (JAVA if w.writer is None else w.writer) != CPP:
        return None
    v = _version(w.software_version)
    if v is None or v[:3] in BAD_CPP_VERSIONS:
        shown = w.software_version or "without a software version"
        return f"ORC C++ {shown} hashed numbers wrongly (ORC-1024): its filters are not used"
    return None


def statistics_policy(orc: OrcFile, col: OrcColumn) -> str | None:
    """Why the min/max statistics of ``col`` must not be used, or None (value counts and
    ``has_null`` are always used). Further checks per entry: doubles with NaN, C++
    string bounds holding NUL bytes."""
    w = orc.writer
    writer = JAVA if w.writer is None else w.writer
    version = w.writer_version or 0
    if col.nested:
        return f"inside a {col.nested}"
    if col.kind == CHAR:
        return "CHAR statistics: padding differs between writers"
    if writer == JAVA:
        if col.kind in TIMESTAMPS and version < ORC_135:
            return f"timestamp statistics before ORC-135 (writer version {version})"
        if col.kind in TEXT and version < HIVE_8732:
            return f"string statistics before HIVE-8732 (writer version {version})"
        precision = getattr(col.arrow_type, "precision", 0)
        if col.kind == DECIMAL and version == ORC_135 and precision <= 18:
            return "decimal64 statistics of ORC 1.5.0 to 1.5.5 are wrong (ORC-517)"
        if col.kind == DECIMAL and w.file_version[:2] == (1, 9999):
            return "decimal statistics of the UNSTABLE-PRE-2.0 format"
    return None


def legacy_policy(orc: OrcFile, col: OrcColumn, values: tuple) -> str | None:
    """Why a legacy BLOOM_FILTER stream (read only when BLOOM_FILTER_UTF8 is absent)
    cannot answer for these values, or None."""
    w = orc.writer
    if (w.writer or JAVA) != JAVA:
        return "legacy BLOOM_FILTER stream from a non-Java writer"
    if col.kind in (DECIMAL, BINARY) or col.kind in TIMESTAMPS:
        return f"legacy BLOOM_FILTER streams of {col.kind_name} columns hash another form"
    if col.kind in TEXT:
        if (w.writer_version or 0) < HIVE_12055:
            return "legacy string filters before HIVE-12055"
        # The JVM's default charset hashed the text; any charset Java runs with encodes
        # ASCII as ASCII, so only ASCII literals test the bytes the writer hashed.
        if not all(isinstance(v, str) and v.isascii() for v in values):
            return "legacy string filters hash the JVM's charset: only ASCII literals are tested"
    return None
