"""Opening a Lance dataset and describing its fragments, for the rest of
:mod:`bloomskip.lance`.

Owns: importing pylance (the ``bloomskip[lance]`` extra) with a typed error when it is
missing, telling a Lance dataset directory from anything else (a ``_versions/``
directory, as the Lance table format lays datasets out), and one row per fragment:
its id, the name bloomskip gives it (``fragment:<id>``), its physical row count (row
offsets run ``0 .. physical_rows - 1``; deleted rows keep their offsets) and an
*identity* - a fingerprint of its data files and overlays. Deletions leave the identity
unchanged on purpose: zones are row-offset ranges, and a deleted row only disappears
from one (Lance keeps its own index through deletions for the same reason).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from bloomskip._lazy import require
from bloomskip.errors import SourceError

#: How bloomskip names a fragment where a file path would go.
FRAGMENT_PREFIX = "fragment:"


def require_lance() -> Any:
    """The ``lance`` module, or :class:`MissingDependencyError` saying how to get it."""
    return require("lance", "reading Lance datasets", "lance", "pylance")


def is_lance_dataset(path: str | os.PathLike) -> bool:
    """True if ``path`` is a Lance dataset directory (it holds ``_versions/``)."""
    text = os.fspath(path)
    if "://" in text and not text.startswith("file://"):
        import pyarrow as pa
        import pyarrow.fs as pafs

        from bloomskip.objstore import filesystem

        try:
            fs, root = filesystem(text)
            info = fs.get_file_info(root.rstrip("/") + "/_versions")
        except (SourceError, OSError, ValueError, pa.ArrowException):
            return False
        return info.type == pafs.FileType.Directory
    if text.startswith("file://"):
        text = text[len("file://") :]
    return os.path.isdir(os.path.join(text, "_versions"))


def dataset_uri(path: str | os.PathLike) -> str:
    """The dataset as pylance opens it: local paths absolute, URIs as given."""
    text = os.fspath(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    return text.rstrip("/") if "://" in text else os.path.abspath(text)


def open_dataset(path: str | os.PathLike, version: int | None = None) -> Any:
    """``lance.dataset(path)`` (at ``version``), with typed errors naming the path."""
    lance = require_lance()
    uri = dataset_uri(path)
    if not is_lance_dataset(uri):
        raise SourceError(f"{uri}: not a Lance dataset (no _versions/ directory)")
    try:
        return lance.dataset(uri, version=version)
    except (OSError, ValueError, RuntimeError) as e:
        raise SourceError(f"{uri}: cannot open the Lance dataset: {e}") from e


@dataclass(frozen=True)
class FragmentInfo:
    """One fragment of one dataset version."""

    fragment_id: int
    physical_rows: int
    identity: int  # 63-bit fingerprint of the data files and overlays

    @property
    def path(self) -> str:
        return fragment_path(self.fragment_id)


def fragment_path(fragment_id: int) -> str:
    return f"{FRAGMENT_PREFIX}{fragment_id}"


def fragment_id_of(path: str) -> int | None:
    """The fragment id in ``fragment:<id>``, else None."""
    if not path.startswith(FRAGMENT_PREFIX):
        return None
    tail = path[len(FRAGMENT_PREFIX) :]
    return int(tail) if tail.isdigit() else None


def fragments(ds: Any) -> list[FragmentInfo]:
    """Every fragment of ``ds``, by fragment id."""
    return sorted((fragment_info(f) for f in ds.get_fragments()), key=lambda f: f.fragment_id)


def fragment_info(frag: Any) -> FragmentInfo:
    """The :class:`FragmentInfo` of one ``lance.LanceFragment``."""
    meta = frag.metadata
    return FragmentInfo(int(frag.fragment_id), int(meta.physical_rows), _identity(meta))


def _identity(meta: Any) -> int:
    """A fingerprint of what a fragment's values are read from: its data files (paths,
    fields) and overlays; not its deletion file."""
    try:
        d = meta.to_json()
        if isinstance(d, str):
            d = json.loads(d)
        body = {"files": d.get("files"), "overlays": d.get("overlays"), "rows": d["physical_rows"]}
    except (AttributeError, KeyError, TypeError, ValueError):
        body = {"files": [f.path for f in meta.files], "rows": int(meta.physical_rows)}
    raw = json.dumps(body, sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little") >> 1
