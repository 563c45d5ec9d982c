"""An S3 API server on loopback for the tests: moto's server mode, in this process.

:func:`moto_server` starts ``moto.server.ThreadedMotoServer`` on ``127.0.0.1`` and a free
port, and points the standard AWS variables at it (``AWS_ENDPOINT_URL``,
``AWS_ALLOW_HTTP``, test credentials and region), as a user configures a real endpoint;
both pyarrow's S3 file system (sources) and obstore (indexes) read them. moto honours
``If-None-Match: *`` on PutObject, which index commits rely on; it checks conditions
without a lock, so tests trigger conflicts one after another, never truly at once.
Nothing ever leaves the machine.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@dataclass
class S3:
    endpoint: str
    bucket: str

    def fs(self) -> pafs.S3FileSystem:
        return pafs.S3FileSystem(
            endpoint_override=self.endpoint,
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )

    def uri(self, *parts: str) -> str:
        return "s3://" + "/".join([self.bucket, *parts])

    def fresh(self) -> str:
        """A prefix nobody used yet (a test's own corner of the bucket)."""
        return uuid.uuid4().hex[:12]

    def write_table(self, table: pa.Table, *parts: str, **options) -> None:
        pq.write_table(table, "/".join([self.bucket, *parts]), filesystem=self.fs(), **options)

    def delete(self, *parts: str) -> None:
        self.fs().delete_file("/".join([self.bucket, *parts]))

    def keys(self, *parts: str) -> list[str]:
        base = "/".join([self.bucket, *parts])
        infos = self.fs().get_file_info(pafs.FileSelector(base, recursive=True))
        return sorted(i.path[len(base) + 1 :] for i in infos if i.type == pafs.FileType.File)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def moto_server() -> Iterator[S3]:
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    saved = {k: os.environ.get(k) for k in [*_ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(_ENV, AWS_ENDPOINT_URL=endpoint)
    try:
        s3 = S3(endpoint, "bloomskip-tests")
        s3.fs().create_dir(s3.bucket)
        yield s3
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


__all__ = ["S3", "free_port", "moto_server"]
