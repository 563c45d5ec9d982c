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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pyarrow.fs as pafs

from tests.support.stores import Store, environment, free_port

_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@dataclass
class S3(Store):
    scheme: ClassVar[str] = "s3"
    endpoint: str
    root: str

    def fs(self) -> pafs.S3FileSystem:
        return pafs.S3FileSystem(
            endpoint_override=self.endpoint,
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )


@contextlib.contextmanager
def moto_server() -> Iterator[S3]:
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        with environment({**_ENV, "AWS_ENDPOINT_URL": endpoint}):
            s3 = S3(endpoint, "bloomskip-tests")
            s3.fs().create_dir(s3.root)
            yield s3
    finally:
        server.stop()


__all__ = ["S3", "free_port", "moto_server"]
