"""A Lance dataset as a source of a bloomskip zone index: its fragments stand where a
lake's files do.

Owns listing the fragments of the latest dataset version as
:class:`~bloomskip.sources.SourceFile` entries (path ``fragment:<id>``, size = its
physical rows, mtime = the fingerprint of its data files, see
:mod:`bloomskip.lance.dataset`) and reading one fragment's columns for
:func:`bloomskip.index.zones.index_file`, with the row offset of every live row.

Zones are then cut as Lance cuts them (``zone-index.md`` 1.2, Lance's ``zoned.rs`` as
pylance 14.0.2 runs it): the live rows of a fragment, in row-address order, are grouped
``zone_rows`` at a time; a zone starts at its first row's offset and spans
``last offset - first offset + 1`` (rows deleted before indexing leave gaps inside a
zone); zones never cross fragments. With ``encoding="arrow"`` and ``sizing="putze"``
(the defaults for a Lance source) each zone's bitset is byte for byte the one Lance
writes for ``number_of_items = zone_rows`` and ``probability = fpp``, and bloomskip's
fragment ids are Lance's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bloomskip.errors import BloomskipError, SourceChangedError, SourceError
from bloomskip.lance.dataset import (
    dataset_uri,
    fragment_id_of,
    fragment_info,
    fragments,
    is_lance_dataset,
    open_dataset,
)
from bloomskip.sources.base import DatasetSource, IndexRead, SourceFile

_OFFSET_MASK = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class LanceSource(DatasetSource):
    """The fragments of a Lance dataset (always its latest version)."""

    uri: str
    default_encoding = "arrow"  # Lance hashes Arrow-width bytes

    recognise = staticmethod(is_lance_dataset)
    normalise = staticmethod(dataset_uri)

    @property
    def scheme(self) -> str:
        return "lance"

    def uri_of(self, path: str) -> str:
        return path

    def to_json(self) -> dict:
        return {"uri": self.uri, "filesystem": "lance", "paths": [self.uri]}

    def list(self) -> list[SourceFile]:
        """Every fragment of the latest version, by fragment id."""
        ds = open_dataset(self.uri)
        return [SourceFile(f.path, f.physical_rows, f.identity) for f in fragments(ds)]

    def arrow_schema(self, listing: Sequence[SourceFile]) -> pa.Schema:
        return open_dataset(self.uri).schema

    def fragment_id_of(self, path: str) -> int | None:
        """The fragment id bloomskip should give ``path``: Lance's own."""
        return fragment_id_of(path)

    def read_for_index(self, file: SourceFile, names: Sequence[str]) -> IndexRead:
        """The live rows of ``names`` of the fragment ``file`` names, in row-address
        order, with their row offsets; raises if it changed since listed."""
        fid = fragment_id_of(file.path)
        if fid is None:
            raise SourceError(f"{self.uri}: {file.path} does not name a fragment")
        ds = open_dataset(self.uri)
        frag = ds.get_fragment(fid)
        now = None if frag is None else fragment_info(frag)
        if now is None or (now.physical_rows, now.identity) != (file.size, file.mtime_ns):
            raise SourceChangedError("changed while it was being indexed")
        missing = [n for n in names if ds.schema.get_field_index(n) < 0]
        if missing:
            raise BloomskipError(f"{self.uri}: no column {', '.join(missing)}")
        table = frag.to_table(columns=names, with_row_address=True)
        addr = table.column("_rowaddr").to_numpy().astype(np.uint64)
        if addr.size and (np.diff(addr.astype(np.int64)) <= 0).any():
            order = np.argsort(addr, kind="stable")
            table, addr = table.take(pa.array(order)), addr[order]
        if addr.size and ((addr >> np.uint64(32)) != np.uint64(fid)).any():
            raise BloomskipError(f"{file.path}: row addresses of another fragment")
        offsets = (addr & _OFFSET_MASK).astype(np.int64)
        return IndexRead("lance", table.select(list(names)), None, offsets)
