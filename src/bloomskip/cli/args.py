"""Every command-line value, checked once: argparse ``type=`` functions.

Each function takes the text of one argument and returns the value, or raises
``argparse.ArgumentTypeError`` with what is accepted, which :class:`~bloomskip.cli.common.
Parser` prints as one line (``bloomskip: error: size: argument --ndv: ...``), exit 2.
Nothing here opens a file: paths are checked with ``os.stat``, so a FIFO, a device or a
socket is refused before anything could block reading it.

* numbers - :func:`fpp` (within :data:`bloomskip.sbbf.sizing.MIN_FPP` ..
  :data:`~bloomskip.sbbf.sizing.MAX_FPP`), :func:`probability`, :func:`count` (``2e6``,
  ``20_000_000``; exact, bounded), and the counts built from it (:data:`NDV`,
  :data:`THREADS`, :data:`ZONE_ROWS`, :data:`KEEP`, ...), :func:`ndv_or_auto`,
  :data:`PRECISION`, :data:`SCALE`;
* values - :func:`hash_value` (per ``hash --type``, with :func:`timestamp_value`,
  :func:`time_value`, :func:`decimal_value`), :func:`physical_spec` (``hash --physical``),
  :func:`stages`, :func:`spark_master`, :func:`utf8_text`, key options (:func:`hex_key`,
  :func:`column_key`, :func:`master_key`);
* paths - :func:`data_file`, :func:`data_file_or_dataset`, :func:`source`,
  :func:`index_dir`, :func:`new_index_dir`, :func:`output_file`, :func:`work_dir`.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime as dt
import math
import os
import re
import stat
import uuid
from collections.abc import Callable
from decimal import Decimal, InvalidOperation, localcontext

from bloomskip.sbbf.sizing import MAX_FPP, MAX_NDV, MIN_FPP

Bad = argparse.ArgumentTypeError

# ----------------------------------------------------------------------------- numbers


def _float(text: str, what: str) -> float:
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise Bad(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise Bad(f"{what} must be a finite number, got {text!r}")
    return value


def fpp(text: str) -> float:
    """A target false-positive probability, as the sizing functions accept it."""
    value = _float(text, "fpp")
    if not 0.0 < value < 1.0:
        raise Bad(f"fpp must be a probability strictly between 0 and 1, got {text!r}")
    if not MIN_FPP <= value <= MAX_FPP:
        raise Bad(
            f"fpp must be a probability strictly between 0 and 1, from {MIN_FPP:g} to "
            f"{MAX_FPP:g}, got {text!r}"
        )
    return value


def probability(text: str) -> float:
    """A probability from 0 to 1, both included."""
    value = _float(text, "a probability")
    if not 0.0 <= value <= 1.0:
        raise Bad(f"must be a probability from 0 to 1, got {text!r}")
    return value


def _decimal(text: str, what: str, hint: str = "") -> Decimal:
    """``text`` as a finite Decimal, exactly (``_`` between digits allowed); else Bad
    ``not a {what}: {text!r}`` (and ``hint`` when it is no number at all)."""
    try:
        value = Decimal(text.strip().replace("_", ""))
    except (InvalidOperation, ValueError):
        raise Bad(f"not a {what}: {text!r}{hint}") from None
    if not value.is_finite():
        raise Bad(f"not a {what}: {text!r}")
    return value


def count(minimum: int, maximum: int, what: str = "count") -> Callable[[str], int]:
    """A whole number from ``minimum`` to ``maximum``, written ``2e6``, ``20_000_000`` or
    ``20000000`` (read exactly: ``1e30`` is 10**30, not the nearest double)."""

    def parse(text: str) -> int:
        value = _decimal(text, what, " (use e.g. 1000, 2e6 or 20_000_000)")
        if not minimum <= value <= maximum:  # before int(): 1e999999999 stays cheap
            raise Bad(f"{what} must be from {minimum:,} to {maximum:,}, got {text!r}")
        if value != value.to_integral_value():
            raise Bad(f"{what} must be a whole number, got {text!r}")
        return int(value)

    parse.__name__ = what.replace(" ", "_")
    return parse


NDV = count(0, MAX_NDV, "distinct count")
THREADS = count(1, 1024, "thread count")
ZONE_ROWS = count(1, 2**31, "zone row count")
KEEP = count(1, 1_000_000, "version count")
FILES = count(1, 100_000, "file count")
ROWS = count(1, 10**12, "row count")
REPEAT = count(1, 1000, "repeat count")
AS_OF = count(0, 2**63 - 1, "table version or snapshot id")
#: ``demo --sbbf --n``: 8 bytes a key, a few copies at once - bounded memory.
SBBF_KEYS = count(1, 100_000_000, "key count")
#: ``hash --precision/--scale``: Arrow's decimal128 and decimal256 reach 76 digits.
PRECISION = count(1, 76, "decimal precision")
SCALE = count(0, 76, "decimal scale")


def ndv_or_auto(text: str) -> int | str:
    """``add-bloom --ndv``: ``auto`` (the largest row group's row count) or a distinct count."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return NDV(text)
    except Bad as e:
        raise Bad(f"{e}; or 'auto' (build for the largest row group, then fold)") from None


# ----------------------------------------------------------------------------- values

_INT_RANGES = {
    f"{sign}int{bits}": (
        (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if sign == "" else (0, 2**bits - 1)
    )
    for sign in ("", "u")
    for bits in (8, 16, 32, 64)
}
_TRUE = ("true", "t", "yes", "1")
_FALSE = ("false", "f", "no", "0")
_FLOAT32_MAX = 3.4028234663852886e38
_FLOAT16_MAX = 65504.0
#: Units of ``hash --unit``, and how many of each make a second.
UNITS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_INT64 = (-(2**63), 2**63 - 1)
_TIMESTAMP = re.compile(
    r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"(Z|[+-]\d{2}:\d{2})?"
)
_TIME = re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")


def _fraction(digits: str | None, unit: str, text: str) -> int:
    """The fraction of a second ``.digits`` in ``unit``s; refuses what the unit cannot hold."""
    digits = digits or ""
    per_second = UNITS[unit]
    places = len(str(per_second)) - 1
    if digits[places:].strip("0"):
        raise Bad(f"{text!r} is finer than the unit {unit}; the column cannot hold it")
    return int((digits[:places] or "0").ljust(places, "0")) if places else 0


def timestamp_value(unit: str) -> Callable[[str], int]:
    """``hash --type timestamp``: ISO 8601 text (``2024-01-31``, ``2024-01-31T12:00:00.5``,
    ``...Z``, ``...+02:00``) to the count of ``unit`` since 1970-01-01 UTC, exactly."""

    def parse(text: str) -> int:
        m = _TIMESTAMP.fullmatch(text.strip())
        if not m:
            raise Bad(
                f"not a timestamp: {text!r} (use YYYY-MM-DD[THH:MM[:SS[.fraction]]][Z|+HH:MM])"
            )
        day, hh, mm, ss, frac, zone = m.groups()
        try:
            days = (dt.date.fromisoformat(day) - dt.date(1970, 1, 1)).days
        except ValueError:
            raise Bad(f"not a timestamp: {text!r} ({day} is not a date)") from None
        hours, minutes, seconds = int(hh or 0), int(mm or 0), int(ss or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise Bad(f"not a timestamp: {text!r} (the time of day is out of range)")
        offset = 0
        if zone and zone != "Z":
            zh, zm = int(zone[1:3]), int(zone[4:6])
            if zh > 23 or zm > 59:
                raise Bad(f"not a timestamp: {text!r} (the offset is out of range)")
            offset = (1 if zone[0] == "+" else -1) * (zh * 3600 + zm * 60)
        total = days * 86_400 + hours * 3600 + minutes * 60 + seconds - offset
        value = total * UNITS[unit] + _fraction(frac, unit, text)
        if not _INT64[0] <= value <= _INT64[1]:
            raise Bad(f"{text} is out of range for a timestamp in {unit} (64 bits)")
        return value

    return parse


def time_value(unit: str) -> Callable[[str], int]:
    """``hash --type time``: ``HH:MM[:SS[.fraction]]`` to the count of ``unit`` since
    midnight."""

    def parse(text: str) -> int:
        m = _TIME.fullmatch(text.strip())
        if not m:
            raise Bad(f"not a time of day: {text!r} (use HH:MM[:SS[.fraction]])")
        hh, mm, ss, frac = m.groups()
        hours, minutes, seconds = int(hh), int(mm), int(ss or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise Bad(f"not a time of day: {text!r} (out of range)")
        return (hours * 3600 + minutes * 60 + seconds) * UNITS[unit] + _fraction(frac, unit, text)

    return parse


def decimal_value(precision: int, scale: int) -> Callable[[str], Decimal]:
    """``hash --type decimal``: a number a DECIMAL(precision, scale) column holds exactly."""

    def parse(text: str) -> Decimal:
        value = _decimal(text, "decimal number")
        if abs(value.adjusted()) > 200:  # before any arithmetic: 1e999999999 stays cheap
            raise Bad(f"{text} does not fit DECIMAL({precision},{scale})")
        with localcontext(prec=500):
            exact = value.quantize(Decimal(1).scaleb(-scale))
            if exact != value:
                raise Bad(f"{text} has more than {scale} digits after the point")
            if abs(exact.scaleb(scale)) >= Decimal(10) ** precision:
                raise Bad(f"{text} does not fit DECIMAL({precision},{scale})")
        return exact

    return parse


_PHYSICAL_NAMES = {
    "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
    "FIXED_LEN_BYTE_ARRAY", "FLBA",
}  # fmt: skip

#: The spellings ``hash --physical`` takes, as its help and its errors list them.
PHYSICAL_TYPES = (
    "INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, BOOLEAN or FIXED_LEN_BYTE_ARRAY[:LENGTH]"
)


def physical_spec(text: str) -> tuple[str, int | None]:
    """``hash --physical``: a Parquet physical type, ``FIXED_LEN_BYTE_ARRAY:N`` (or
    ``FLBA:N``) with its length; returns ``(type name, length or None)``."""
    name, sep, length = text.strip().upper().partition(":")
    if name not in _PHYSICAL_NAMES:
        raise Bad(f"not a Parquet physical type: {text!r} (use {PHYSICAL_TYPES})")
    name = "FIXED_LEN_BYTE_ARRAY" if name == "FLBA" else name
    if not sep:
        return name, None
    if name != "FIXED_LEN_BYTE_ARRAY":
        raise Bad(f"{text!r}: only FIXED_LEN_BYTE_ARRAY takes a length")
    return name, count(1, 2**31 - 1, "FIXED_LEN_BYTE_ARRAY length")(length)


def _utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Bad(f"{what} is not valid UTF-8: {text!r}") from None
    return text


def hash_value(
    type_name: str, *, unit: str = "us", precision: int = 38, scale: int = 0
) -> Callable[[str], object]:
    """The converter of ``hash --type type_name``: text to the Python value to hash
    (timestamps and times as their count of ``unit``)."""
    if type_name == "timestamp":
        return timestamp_value(unit)
    if type_name == "time":
        return time_value(unit)
    if type_name == "decimal":
        return decimal_value(precision, scale)

    def parse(text: str) -> object:
        if type_name in _INT_RANGES:
            low, high = _INT_RANGES[type_name]
            try:
                value = int(text.strip().replace("_", ""))
            except ValueError:
                raise Bad(f"not an integer: {text!r}") from None
            if not low <= value <= high:
                raise Bad(f"{text} is out of range for {type_name} ({low:,} to {high:,})")
            return value
        if type_name in ("float", "double", "float16"):
            try:
                value = float(text)
            except ValueError:
                raise Bad(f"not a number: {text!r} (nan and inf are numbers)") from None
            if type_name == "float" and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
                raise Bad(f"{text} is out of range for float (32-bit)")
            if type_name == "float16" and math.isfinite(value) and abs(value) > _FLOAT16_MAX:
                raise Bad(f"{text} is out of range for float16 (at most 65504)")
            return value
        if type_name == "bool":
            low = text.strip().lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE
            raise Bad(f"not a boolean: {text!r} (use true/false, t/f, yes/no or 1/0)")
        if type_name == "date":
            try:
                return dt.date.fromisoformat(text.strip())
            except ValueError:
                raise Bad(f"not a date: {text!r} (use YYYY-MM-DD)") from None
        if type_name == "binary":
            try:
                return bytes.fromhex(text)
            except ValueError:
                raise Bad(f"not hexadecimal bytes: {text!r} (e.g. 00ff)") from None
        if type_name == "uuid":
            try:
                return uuid.UUID(text.strip()).bytes
            except ValueError:
                example = "12345678-1234-5678-1234-567812345678"
                raise Bad(f"not a UUID: {text!r} (e.g. {example})") from None
        return _utf8(text, "the value")

    return parse


STAGE_NAMES = ("statistics", "dictionary", "bloom")


def stages(text: str) -> list[str]:
    """``prune --stages``: a comma-separated, non-empty subset of :data:`STAGE_NAMES`."""
    names = [s.strip() for s in text.split(",")]
    bad = [s for s in names if s not in STAGE_NAMES]
    if not text.strip() or bad:
        raise Bad(f"unknown stage(s) {bad or [text]}: use a comma-separated list of "
                  f"{', '.join(STAGE_NAMES)}")  # fmt: skip
    return names


_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d{0,4})(,[1-9]\d{0,4})?\])?|local-cluster\[\d{1,5},\d{1,5},\d{1,7}\]"
    r"|yarn|(spark|k8s|mesos)://[^\s/]\S*"
)


def spark_master(text: str) -> str:
    """A Spark master URL: ``local``, ``local[4]``, ``local[*]``, ``spark://host:7077``,
    ``yarn``, ``k8s://...``, ``mesos://...``."""
    if not _MASTER.fullmatch(text):
        raise Bad(
            f"not a Spark master: {text!r} (use local[*], local[4], spark://host:7077, yarn "
            "or k8s://https://host:443)"
        )
    return text


def column(text: str) -> str:
    """A column name: non-empty UTF-8 text."""
    if not text:
        raise Bad("a column name cannot be empty")
    return _utf8(text, "the column name")


def utf8_text(text: str) -> str:
    """Text that must be UTF-8 (SQL, values, an AAD prefix)."""
    return _utf8(text, "the text")


def sql(text: str) -> str:
    """A SQL predicate: non-empty UTF-8 text (the library parses it)."""
    if not text.strip():
        raise Bad("the predicate is empty (e.g. \"user_id = 'u_42'\")")
    return _utf8(text, "the predicate")


def time_zone(text: str) -> str:
    """A time zone: an IANA name (``America/New_York``) or an offset (``+05:30``)."""
    from bloomskip.expr.literals import time_zone as known

    if not text.strip() or known(text) is None:
        raise Bad(f"not a time zone: {text!r} (use a name like America/New_York, or +05:30)")
    return text.strip()


def hex_key(text: str) -> str:
    """An AES key in hex: 16, 24 or 32 bytes."""
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise Bad(f"not a hexadecimal key: {text!r}") from None
    if len(key) not in (16, 24, 32):
        raise Bad(f"an AES key has 16, 24 or 32 bytes (32, 48 or 64 hex digits), got {len(key)}")
    return text


def column_key(text: str) -> tuple[str, str]:
    """``--column-key COLUMN=HEX``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise Bad(f"{text!r}: use COLUMN=HEX")
    return column(name), hex_key(value)


def master_key(text: str) -> tuple[str, bytes]:
    """``--master-key ID=BASE64``: an AES key of 16, 24 or 32 bytes."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise Bad(f"{text!r}: use ID=BASE64")
    try:
        key = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise Bad(f"master key {name}: not base64") from None
    if len(key) not in (16, 24, 32):
        raise Bad(f"master key {name}: an AES key has 16, 24 or 32 bytes, got {len(key)}")
    return _utf8(name, "the key id"), key


# ----------------------------------------------------------------------------- paths


def _is_uri(text: str) -> bool:
    return "://" in text and not text.startswith("file://")


def _local(text: str) -> str:
    return text[len("file://") :] if text.startswith("file://") else text


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISREG, "a file"),
    ):
        if test(mode):
            return name
    return "not a regular file"


_MISSING = "no such file or directory"


def _stat(path: str, missing: str = _MISSING) -> os.stat_result:
    if not path:
        raise Bad("the path is empty")
    if "\0" in path:
        raise Bad(f"{path!r}: a path cannot hold a NUL byte")
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise Bad(f"{path}: {missing}") from None
    except OSError as e:
        raise Bad(f"{path}: {e.strerror or e}") from None


def _require(
    path: str, is_kind: Callable[[int], bool], wrong: str, missing: str = _MISSING
) -> None:
    """Bad unless ``path`` exists and its mode passes ``is_kind`` (``stat.S_ISREG``, ...):
    ``{path} is {its kind}{wrong}``, or ``{path}: {missing}`` when there is nothing."""
    st = _stat(path, missing)
    if not is_kind(st.st_mode):
        raise Bad(f"{path} is {_kind(st.st_mode)}{wrong}")


def regular_file(text: str, what: str = "a data file") -> str:
    """An existing regular file (``file://`` dropped)."""
    path = _local(text)
    _require(path, stat.S_ISREG, f", not {what}")
    return path


def data_file(text: str) -> str:
    """An existing regular file (Parquet or ORC)."""
    return regular_file(text)


def _lance(path: str) -> bool:
    from bloomskip.lance.dataset import is_lance_dataset

    return is_lance_dataset(path)


def data_file_or_dataset(text: str) -> str:
    """A regular file, a Lance dataset directory, or a URI (of a Lance dataset)."""
    if _is_uri(text):
        return text
    path = _local(text)
    st = _stat(path)
    if stat.S_ISDIR(st.st_mode):
        if _lance(path):
            return path
        raise Bad(f"{path} is a directory but not a Lance dataset (it has no _versions/)")
    if not stat.S_ISREG(st.st_mode):
        raise Bad(f"{path} is {_kind(st.st_mode)}, not a data file")
    return path


def source(text: str) -> str:
    """What an index covers: a directory, a regular file, or a URI (s3://, gs://, ...,
    iceberg://CATALOG/NAMESPACE.TABLE)."""
    if _is_uri(text):
        return text
    st = _stat(_local(text))
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        raise Bad(f"{text} is {_kind(st.st_mode)}: a source is a directory, a file or a URI")
    return text


def index_dir(text: str) -> str:
    """An existing local directory (a zone index, or a Lance dataset for ``query``)."""
    if _is_uri(text):
        return text  # a Lance dataset on an object store; the library says if it is not
    path = _local(text)
    _require(path, stat.S_ISDIR, ": no zone index here", "no zone index here (no such directory)")
    return text


def new_index_dir(text: str) -> str:
    """Where ``index build`` writes: a missing path or a directory, never a file; or an
    object store prefix (``s3://``, ``gs://``, ``az://``: the library checks the scheme)."""
    if _is_uri(text) and not text.startswith("file://"):
        return text
    path = _local(text)
    if os.path.lexists(path):
        _require(path, stat.S_ISDIR, ": an index is a directory")
    return text


def _exists(path: str) -> bool:
    """Whether anything is at ``path`` (a dangling link too); Bad for an empty path."""
    if not path:
        raise Bad("the path is empty")
    return os.path.lexists(path)


def output_file(text: str) -> str:
    """A file to write: missing (its directory exists) or an existing regular file."""
    if _exists(text):
        _require(text, stat.S_ISREG, ": the output must be a regular file")
    else:
        parent = os.path.dirname(text) or "."
        _require(parent, stat.S_ISDIR, ", not a directory", "the directory does not exist")
    return text


def work_dir(text: str) -> str:
    """A working directory: missing (it is created) or a directory."""
    if _exists(text):
        _require(text, stat.S_ISDIR, ", not a directory")
    return text


def keys_file(text: str) -> str:
    """``--keys FILE``: an existing regular file (JSON)."""
    return regular_file(text, "a JSON file of keys")
