"""Typed errors raised by bloomskip.

Every error says what was wrong and what is accepted. All of them derive from
:class:`BloomskipError`, and each also derives from the built-in exception a
Python programmer would expect (``ValueError`` for bad arguments, ``TypeError``
for unsupported types), so ``except ValueError`` keeps working.

:func:`parse_choice` reads a setting named by text (a hash, an encoding, a strategy) into
its enum, or raises the one error every such setting gives.

One exception is not an error: :class:`Interrupted` (a signal asked the process to stop
while a file was being written) is a ``KeyboardInterrupt``, so that no ``except
Exception`` - nor ``except BloomskipError`` - swallows a request to stop.
"""

from __future__ import annotations

import signal
from enum import Enum
from typing import TypeVar

E = TypeVar("E", bound=Enum)


class BloomskipError(Exception):
    """Base class of every error bloomskip raises on purpose."""


class InvalidFilterSizeError(BloomskipError, ValueError):
    """A bitset size that is not a power of two from 32 B to 128 MiB."""


class InvalidBitsetError(BloomskipError, ValueError):
    """Raw bitset bytes that cannot be a Split Block Bloom Filter."""


class InvalidParameterError(BloomskipError, ValueError):
    """A parameter (FPP, NDV, fold count, policy name...) outside its accepted range."""


def parse_choice(choices: type[E], value: object, what: str, accepted: str = "") -> E:
    """``value`` (a member of the enum ``choices``, or a member's value) as the member, or
    :class:`InvalidParameterError` ``unknown {what} {value!r}: {accepted}``; ``accepted``
    is by default ``use one of`` and the values."""
    try:
        return choices(value)
    except ValueError:
        accepted = accepted or "use one of " + ", ".join(repr(m.value) for m in choices)
        raise InvalidParameterError(f"unknown {what} {value!r}: {accepted}") from None


class IncompatibleFiltersError(BloomskipError, ValueError):
    """Two filters that cannot be combined (different sizes, hashes or encodings)."""


class UnsupportedTypeError(BloomskipError, TypeError):
    """A value type that has no encoding under the requested rule."""


class ReadOnlyFilterError(BloomskipError, ValueError):
    """An insert into a filter that views a read-only buffer (e.g. a read-only mmap)."""


class CorruptFileError(BloomskipError, ValueError):
    """A file (or a structure inside it) that cannot be what it claims to be.

    The message names the file when one is known, the structure and the byte offset.
    """


class OutOfMemoryError(BloomskipError, MemoryError):
    """What a file claims to hold (an index's zones) does not fit in this process's memory:
    a damaged or forged file, or one too big for the machine."""


class UnsupportedFileError(BloomskipError, ValueError):
    """A valid file that uses a feature bloomskip does not handle yet (e.g. encryption)."""


class NotDataFileError(UnsupportedFileError):
    """A file that is no Parquet or ORC file at all: neither its first nor its last bytes
    are a format's magic, so no Parquet or ORC reader reads a row of it (a lake's
    ``README``, a stray CSV). ``size``: how long the file was when it was judged."""

    def __init__(self, message: str, size: int | None = None) -> None:
        super().__init__(message)
        self.size = size


class PredicateError(BloomskipError, ValueError):
    """A predicate that cannot be parsed, or that names a column the data does not have."""


class IndexNotFoundError(BloomskipError, FileNotFoundError):
    """A zone index directory that does not exist or holds no committed version."""


class CommitConflictError(BloomskipError, RuntimeError):
    """Another writer committed to the same index first, and retrying did not help."""


class SourceError(BloomskipError, OSError):
    """A data source (directory, file or URI) that cannot be listed or opened."""


class SourceChangedError(BloomskipError, RuntimeError):
    """A file (or fragment) of a source changed while bloomskip was reading it."""


class FileChangedError(BloomskipError, RuntimeError):
    """A file that another writer replaced or modified while bloomskip was rewriting it:
    nothing was written over it (its newer content is kept). The message names the file."""


class MissingDependencyError(BloomskipError, ImportError):
    """An optional dependency (an extra such as ``bloomskip[lance]``) is not installed."""


class SparkJobError(BloomskipError, RuntimeError):
    """A Spark job bloomskip ran failed (after Spark's own retries); nothing was committed."""


class EncryptionError(BloomskipError, ValueError):
    """Base class of the errors about Parquet modular encryption (keys and ciphertext)."""


class MissingKeyError(EncryptionError):
    """An encrypted module needs a key that was not given (or that the KMS would not give).

    The message names the file, the key (footer or column) and its key metadata.
    """


class DecryptionError(EncryptionError):
    """An encrypted module failed AES-GCM authentication: a wrong key (or AAD prefix), or
    ciphertext that was changed or cut. Nothing from such a module is ever used."""


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived while bloomskip was writing a file: the temporary
    file was removed and the target left as it was (or, if the signal came during the
    final rename, replaced whole). ``signum`` is the signal; the command line exits with
    ``128 + signum``. Not a :class:`BloomskipError`: a request to stop, not an error."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        try:
            self.signal_name = signal.Signals(signum).name
        except ValueError:
            self.signal_name = f"signal {signum}"
        super().__init__(f"interrupted by {self.signal_name}")
