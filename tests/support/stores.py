"""What the tests' object stores on loopback share (:mod:`.s3`: moto; :mod:`.azure`:
Azurite): a bucket or container of one store, its objects written, deleted and listed
through ``pyarrow.fs``, a free loopback port, and environment variables set for a block
and put back after it."""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq


class Store:
    """A bucket (or container) ``root`` of a store served on loopback, named by URIs of
    ``scheme``; subclasses give :meth:`fs`."""

    scheme: ClassVar[str]
    root: str

    def fs(self) -> Any:
        raise NotImplementedError

    def uri(self, *parts: str) -> str:
        return f"{self.scheme}://" + "/".join([self.root, *parts])

    def fresh(self) -> str:
        """A prefix nobody used yet (a test's own corner of the bucket)."""
        return uuid.uuid4().hex[:12]

    def write_table(self, table: pa.Table, *parts: str, **options) -> None:
        pq.write_table(table, "/".join([self.root, *parts]), filesystem=self.fs(), **options)

    def delete(self, *parts: str) -> None:
        self.fs().delete_file("/".join([self.root, *parts]))

    def keys(self, *parts: str) -> list[str]:
        base = "/".join([self.root, *parts])
        infos = self.fs().get_file_info(pafs.FileSelector(base, recursive=True))
        return sorted(i.path[len(base) + 1 :] for i in infos if i.type == pafs.FileType.File)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block; what was there before, after it."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


__all__ = ["Store", "environment", "free_port"]
