"""Committing and reading index versions atomically, on a local directory or an object store.

Every change to an index writes *new* objects (tables, parts, serving files under unique
names) and then publishes one manifest, ``_manifests/v<N+1>.json``, with a create that
succeeds only if no object has that name (:meth:`~.storage.Storage.create`: a hard link
locally, a conditional put on object stores). So:

* a reader takes the highest ``v*.json`` and sees version N or N+1, never half;
* a writer killed at any point leaves the previous version intact (and at worst orphan
  objects, which :func:`vacuum` removes);
* of two writers racing for N+1, exactly one wins; the other gets
  :class:`~bloomskip.errors.CommitConflictError` and re-plans on top of the winner. When
  a create fails, the manifest is read back: if it is this writer's own (a retried
  request that had in fact succeeded), the commit stands.

An index root belongs to bloomskip only if it holds the marker (:data:`~.layout.MARKER`),
written when an index is first created there, into an empty root. :func:`vacuum` deletes
nothing but names the index writes (:data:`~.layout.NAMES`) that no kept manifest uses,
and locally never follows a symbolic link.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from dataclasses import replace

from bloomskip.errors import (
    CommitConflictError,
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
)
from bloomskip.index import integrity
from bloomskip.index.layout import (
    FORMAT,
    FORMAT_VERSION,
    MANIFESTS,
    MARKER,
    MAX_MANIFEST_BYTES,
    NAMES,
    Manifest,
    check_depth,
)
from bloomskip.index.storage import Storage, age_s, open_storage
from bloomskip.sources.base import Source, SourceFile

_MANIFEST_RE = re.compile(r"^v(\d{20})\.json\Z")


def at(where: Storage | str | os.PathLike) -> Storage:
    """A storage, or the storage an index path or URI names."""
    return where if isinstance(where, Storage) else open_storage(where)


def versions(storage: Storage | str | os.PathLike) -> list[int]:
    """Committed versions, ascending."""
    storage = at(storage)
    out = []
    for e in storage.list(MANIFESTS + "/", strict=True):  # a version unseen is a version lost
        m = _MANIFEST_RE.match(e.rel[len(MANIFESTS) + 1 :])
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def manifest_name(version: int) -> str:
    return f"{MANIFESTS}/v{version:020d}.json"


def is_index(storage: Storage) -> bool:
    """Whether the root holds the marker or a committed version (an index written before
    markers existed)."""
    return storage.size(MARKER) is not None or bool(versions(storage))


def claim(storage: Storage, checked: bool | None = None) -> None:
    """Make the root an index root: the marker is written into an empty root; a root that
    holds anything else is refused (:func:`check_claim`), so nothing bloomskip did not
    write is ever at risk. ``checked``: what :func:`check_claim` answered already (its
    requests are not made again; the marker's create is conditional all the same)."""
    is_index = check_claim(storage) if checked is None else checked
    if not is_index or storage.size(MARKER) is None:
        storage.create(MARKER, _marker())


def check_claim(storage: Storage) -> bool:
    """Whether the root is an index already (True) or empty (False); anything else -
    files of the user's, a lake, an object with the root's own name - is refused with
    InvalidParameterError, before anything is read or written."""
    if storage.root_is_object():
        raise InvalidParameterError(
            f"{storage.uri}: a file (an object) has this name; an index is a directory (a "
            "prefix) of its own"
        )
    if is_index(storage):
        return True
    others = [e.rel for e in storage.list() if not NAMES.match(e.rel)][:3]
    if others:
        raise InvalidParameterError(
            f"{storage.uri}: not empty and not a bloomskip index (it holds "
            f"{', '.join(others)}{', ...' if len(others) == 3 else ''}); give an empty or a "
            "new directory"
        )
    return False


def _marker() -> bytes:
    from bloomskip import __version__

    return json.dumps({"format": FORMAT, "created_by": f"bloomskip {__version__}"}).encode()


def read_manifest(storage: Storage | str | os.PathLike, version: int | None = None) -> Manifest:
    """The manifest of ``version`` (default: the latest)."""
    storage = at(storage)
    if version is None:
        found = versions(storage)
        if not found:
            raise IndexNotFoundError(f"{storage.uri}: no zone index here (no committed version)")
        version = found[-1]
    name = manifest_name(version)
    label = storage.label(name)
    size = storage.size(name)
    if size is None:
        raise IndexNotFoundError(f"{storage.uri}: version {version} does not exist")
    if size > MAX_MANIFEST_BYTES:
        raise CorruptFileError(f"{label}: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        raw = storage.read(name)
    except FileNotFoundError:
        raise IndexNotFoundError(f"{storage.uri}: version {version} does not exist") from None
    check_depth(raw, label)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise CorruptFileError(f"{label}: manifest is not JSON: {e}") from e
    if not isinstance(data, dict):
        raise CorruptFileError(f"{label}: manifest is not a JSON object")
    integrity.check_json(data, label)
    m = Manifest.from_json(data, label)
    if m.version != version:
        raise CorruptFileError(f"{label}: says version {m.version}")
    return m


def publish(storage: Storage | str | os.PathLike, manifest: Manifest) -> Manifest:
    """Make ``manifest`` the committed version ``manifest.version`` and return it as
    written, or raise :class:`CommitConflictError` if another writer took that version."""
    storage = at(storage)
    manifest = _stamped(manifest)
    body = manifest_bytes(manifest)
    name = manifest_name(manifest.version)
    if storage.create(name, body):
        return manifest
    try:  # taken: by another writer, or by an earlier try of this very request?
        if storage.read(name) == body:
            return manifest
    except FileNotFoundError:
        pass
    raise CommitConflictError(
        f"{storage.uri}: version {manifest.version} was committed by another writer"
    )


def manifest_bytes(manifest: Manifest) -> bytes:
    """The manifest as committed: JSON with its checksum (:mod:`.integrity`)."""
    doc = manifest.to_json()
    doc[integrity.MANIFEST_KEY] = integrity.json_checksum(doc)
    return json.dumps(doc, indent=1, sort_keys=True).encode()


def _stamped(m: Manifest) -> Manifest:
    from bloomskip import __version__

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return replace(
        m,
        committed_at=stamp,
        writer=f"bloomskip {__version__}",
        commit_id=uuid.uuid4().hex,
        format_version=FORMAT_VERSION,
    )


def inside(storage: Storage, src: Source, listing: list[SourceFile]) -> list[SourceFile]:
    """``listing`` without the index's own objects (an index kept inside its lake)."""
    if not storage.local or src.scheme != "local":
        return listing
    root = storage.uri.rstrip(os.sep) + os.sep
    return [f for f in listing if not f.path.startswith(root)]


def new_name(directory: str, suffix: str) -> str:
    """A fresh name under ``directory`` (relative to the root)."""
    return f"{directory}/{uuid.uuid4().hex}{suffix}"


def referenced(m: Manifest) -> set[str]:
    """Names of every object ``m`` uses."""
    refs = {m.fragments} if m.fragments else set()
    for c in m.columns.values():
        for s in c.segments:
            refs.update(s.names)
    return refs


def vacuum(
    storage: Storage | str | os.PathLike, *, keep_versions: int = 5, min_age_s: float = 3600.0
) -> list[str]:
    """Delete manifests older than the last ``keep_versions`` and every object the index
    wrote that no kept manifest uses, if older than ``min_age_s`` (a running build's fresh
    objects are never touched). Returns the names removed."""
    storage = at(storage)
    found = versions(storage)
    if not found and storage.size(MARKER) is None:
        raise IndexNotFoundError(f"{storage.uri}: no zone index here (no committed version)")
    # (an index whose first build was killed has its marker and no version: its objects
    # are all orphans)
    keep = found[-keep_versions:] if keep_versions > 0 else found[-1:]
    live: set[str] = {MARKER}
    for v in keep:
        live.add(manifest_name(v))
        live |= referenced(read_manifest(storage, v))
    removed = []
    for e in storage.list():
        if e.rel in live or not NAMES.match(e.rel):
            continue  # ours and in use, or not ours at all
        old_manifest = _MANIFEST_RE.match(e.rel.rpartition("/")[2]) and e.rel.startswith(MANIFESTS)
        if not old_manifest and age_s(e) < min_age_s:
            continue
        storage.delete(e.rel)
        removed.append(e.rel)
    return sorted(removed)


__all__ = [
    "at",
    "claim",
    "inside",
    "is_index",
    "manifest_bytes",
    "manifest_name",
    "new_name",
    "publish",
    "read_manifest",
    "referenced",
    "vacuum",
    "versions",
]
