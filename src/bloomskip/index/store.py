"""Committing and reading index versions atomically, on a local directory.

Every change to an index writes *new* files (tables under unique names, each written to a
temporary name, fsynced and renamed) and then publishes one manifest,
``_manifests/v<N+1>.json``. Publishing is an exclusive create: the manifest is written and
fsynced under a temporary name, then hard-linked to its final name, which fails if that
name exists. So:

* a reader takes the highest complete ``v*.json`` and sees version N or N+1, never half;
* a writer killed at any point leaves the previous version intact (and at worst orphan
  files, which :func:`vacuum` removes);
* of two writers racing for N+1, exactly one wins; the other gets
  :class:`~bloomskip.errors.CommitConflictError` and re-plans on top of the winner.

The index directory must be on a local (or mounted) file system: object stores do not
offer an exclusive create through ``pyarrow.fs``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.errors import CommitConflictError, CorruptFileError, IndexNotFoundError, SourceError
from bloomskip.index.layout import Manifest

MANIFESTS = "_manifests"
_MANIFEST_RE = re.compile(r"^v(\d{20})\.json$")
#: Largest manifest we agree to read.
MAX_MANIFEST_BYTES = 256 * 1024 * 1024


def local_dir(index_path: str | os.PathLike) -> str:
    """The index directory as a local path (``file://`` URIs accepted)."""
    text = os.fspath(index_path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif "://" in text:
        raise SourceError(
            f"{text}: an index must live in a local or mounted directory (its commits need "
            "an atomic exclusive create); the data it indexes may be anywhere pyarrow.fs reads"
        )
    return os.path.abspath(text)


def versions(root: str) -> list[int]:
    """Committed versions, ascending."""
    try:
        names = os.listdir(os.path.join(root, MANIFESTS))
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := _MANIFEST_RE.match(n)))


def manifest_path(root: str, version: int) -> str:
    return os.path.join(root, MANIFESTS, f"v{version:020d}.json")


def read_manifest(root: str, version: int | None = None) -> Manifest:
    """The manifest of ``version`` (default: the latest)."""
    if version is None:
        found = versions(root)
        if not found:
            raise IndexNotFoundError(f"{root}: no zone index here (no committed version)")
        version = found[-1]
    path = manifest_path(root, version)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise IndexNotFoundError(f"{root}: version {version} does not exist") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise CorruptFileError(f"{path}: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise CorruptFileError(f"{path}: manifest is not JSON: {e}") from e
    if not isinstance(data, dict):
        raise CorruptFileError(f"{path}: manifest is not a JSON object")
    m = Manifest.from_json(data, path)
    if m.version != version:
        raise CorruptFileError(f"{path}: says version {m.version}")
    return m


def publish(root: str, manifest: Manifest) -> None:
    """Make ``manifest`` the committed version ``manifest.version``, or raise
    :class:`CommitConflictError` if another writer took that version first."""
    directory = os.path.join(root, MANIFESTS)
    os.makedirs(directory, exist_ok=True)
    manifest = _stamped(manifest)
    body = json.dumps(manifest.to_json(), indent=1, sort_keys=True).encode()
    tmp = os.path.join(directory, f".tmp-{uuid.uuid4().hex}.json")
    try:
        with open(tmp, "xb") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, manifest_path(root, manifest.version))
        except FileExistsError:
            raise CommitConflictError(
                f"{root}: version {manifest.version} was committed by another writer"
            ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _fsync_dir(directory)


def _stamped(m: Manifest) -> Manifest:
    from dataclasses import replace

    from bloomskip import __version__

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return replace(m, committed_at=stamp, writer=f"bloomskip {__version__}")


def new_name(directory: str, suffix: str) -> str:
    """A fresh relative file name under ``directory``."""
    return f"{directory}/{uuid.uuid4().hex}{suffix}"


def write_table(root: str, rel: str, table: pa.Table) -> int:
    """Write ``table`` as Parquet at ``root/rel`` (temporary name, fsync, rename); return
    its size. Filter bitsets are stored without statistics or dictionary, zstd-compressed
    (sparse filters of low-cardinality zones shrink to a few percent)."""
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            use_dictionary=[c for c in table.column_names if c in ("path", "format")],
            write_statistics=[c for c in table.column_names if c != "bloom_filter_data"],
            row_group_size=4096,
        )
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return os.path.getsize(path)


def read_table(root: str, rel: str, columns: list[str] | None = None) -> pa.Table:
    path = os.path.join(root, rel)
    try:
        return pq.read_table(path, columns=columns)
    except FileNotFoundError:
        raise CorruptFileError(f"{path}: listed by the index manifest but missing") from None
    except (OSError, pa.ArrowException) as e:
        raise CorruptFileError(f"{path}: unreadable index table: {e}") from e


def referenced(m: Manifest) -> set[str]:
    """Relative paths of every table ``m`` uses."""
    refs = {m.fragments} if m.fragments else set()
    for c in m.columns.values():
        for s in c.segments:
            refs |= {s.zones, s.files}
    return refs


def vacuum(root: str, *, keep_versions: int = 5, min_age_s: float = 3600.0) -> list[str]:
    """Delete manifests older than the last ``keep_versions`` and every table no kept
    manifest references, if older than ``min_age_s`` (a running build's fresh files are
    never touched). Returns the relative paths removed."""
    found = versions(root)
    keep = found[-keep_versions:] if keep_versions > 0 else found[-1:]
    live: set[str] = set()
    for v in keep:
        live |= referenced(read_manifest(root, v))
    removed = []
    now = time.time()
    for v in found:
        if v not in keep:
            os.unlink(manifest_path(root, v))
            removed.append(os.path.relpath(manifest_path(root, v), root))
    manifests = os.path.join(root, MANIFESTS)
    for name in os.listdir(manifests) if os.path.isdir(manifests) else []:
        path = os.path.join(manifests, name)
        if name.startswith(".tmp-") and now - os.path.getmtime(path) >= min_age_s:
            os.unlink(path)  # left by a commit killed before it linked its manifest
            removed.append(f"{MANIFESTS}/{name}")
    for rel in _tables(root):
        path = os.path.join(root, rel)
        if rel not in live and now - os.path.getmtime(path) >= min_age_s:
            os.unlink(path)
            removed.append(rel)
    return removed


def _tables(root: str) -> Iterator[str]:
    for top in ("fragments", "columns"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
