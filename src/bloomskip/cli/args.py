"""Every command-line value, checked once: argparse ``type=`` functions.

Each function takes the text of one argument and returns the value, or raises
``argparse.ArgumentTypeError`` with what is accepted, which :class:`~bloomskip.cli.common.
Parser` prints as one line (``bloomskip: error: size: argument --ndv: ...``), exit 2.
Nothing here opens a file: paths are checked with ``os.stat``, so a FIFO, a device or a
socket is refused before anything could block reading it.

* numbers - :func:`fpp` (within :data:`bloomskip.sbbf.sizing.MIN_FPP` ..
  :data:`~bloomskip.sbbf.sizing.MAX_FPP`), :func:`probability`, :func:`count` (``2e6``,
  ``20_000_000``; exact, bounded), and the counts built from it (:data:`NDV`,
  :data:`THREADS`, :data:`ZONE_ROWS`, :data:`KEEP`, ...);
* values - :func:`hash_value` (per ``hash --type``), :func:`stages`, :func:`spark_master`,
  :func:`utf8_text`, key options (:func:`hex_key`, :func:`column_key`, :func:`master_key`);
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
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

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


def count(minimum: int, maximum: int, what: str = "count") -> Callable[[str], int]:
    """A whole number from ``minimum`` to ``maximum``, written ``2e6``, ``20_000_000`` or
    ``20000000`` (read exactly: ``1e30`` is 10**30, not the nearest double)."""

    def parse(text: str) -> int:
        try:
            value = Decimal(text.strip().replace("_", ""))
        except (InvalidOperation, ValueError):
            raise Bad(f"not a {what}: {text!r} (use e.g. 1000, 2e6 or 20_000_000)") from None
        if not value.is_finite():
            raise Bad(f"not a {what}: {text!r}")
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
#: ``demo --sbbf --n``: 8 bytes a key, a few copies at once - bounded memory.
SBBF_KEYS = count(1, 100_000_000, "key count")

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


def _utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Bad(f"{what} is not valid UTF-8: {text!r}") from None
    return text


def hash_value(type_name: str) -> Callable[[str], object]:
    """The converter of ``hash --type type_name``: text to the Python value to hash."""

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
        if type_name in ("float", "double"):
            try:
                value = float(text)
            except ValueError:
                raise Bad(f"not a number: {text!r} (nan and inf are numbers)") from None
            if type_name == "float" and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
                raise Bad(f"{text} is out of range for float (32-bit)")
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


def _stat(path: str, missing: str = "no such file or directory") -> os.stat_result:
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


def regular_file(text: str, what: str = "a data file") -> str:
    """An existing regular file (``file://`` dropped)."""
    path = _local(text)
    st = _stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise Bad(f"{path} is {_kind(st.st_mode)}, not {what}")
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
    """What an index covers: a directory, a regular file, or a URI (s3://, gs://, ...)."""
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
    st = _stat(path, "no zone index here (no such directory)")
    if not stat.S_ISDIR(st.st_mode):
        raise Bad(f"{path} is {_kind(st.st_mode)}: no zone index here")
    return text


def new_index_dir(text: str) -> str:
    """Where ``index build`` writes: a missing path or a directory, never a file."""
    path = _local(text)
    if _is_uri(text):
        raise Bad(f"{text}: an index lives in a local or mounted directory")
    if not os.path.lexists(path):
        return text
    st = _stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise Bad(f"{path} is {_kind(st.st_mode)}: an index is a directory")
    return text


def output_file(text: str) -> str:
    """A file to write: missing (its directory exists) or an existing regular file."""
    if not text:
        raise Bad("the path is empty")
    if os.path.lexists(text):
        st = _stat(text)
        if not stat.S_ISREG(st.st_mode):
            raise Bad(f"{text} is {_kind(st.st_mode)}: the output must be a regular file")
        return text
    parent = os.path.dirname(text) or "."
    st = _stat(parent, "the directory does not exist")
    if not stat.S_ISDIR(st.st_mode):
        raise Bad(f"{parent} is {_kind(st.st_mode)}, not a directory")
    return text


def work_dir(text: str) -> str:
    """A working directory: missing (it is created) or a directory."""
    if not text:
        raise Bad("the path is empty")
    if os.path.lexists(text):
        st = _stat(text)
        if not stat.S_ISDIR(st.st_mode):
            raise Bad(f"{text} is {_kind(st.st_mode)}, not a directory")
    return text


def keys_file(text: str) -> str:
    """``--keys FILE``: an existing regular file (JSON)."""
    return regular_file(text, "a JSON file of keys")
