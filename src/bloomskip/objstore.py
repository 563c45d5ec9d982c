"""Object stores through obstore (the Python binding of Rust's ``object_store``): one way
to open a store for a URL, configured as users configure their clients.

Credentials, region and endpoint come from the standard environment variables
(``AWS_ACCESS_KEY_ID``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_
CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``, ...). A plain-http endpoint is allowed when
``AWS_ALLOW_HTTP=true`` or ``AWS_ENDPOINT_URL`` says ``http://``. Used by index storage
(:mod:`bloomskip.index.storage`) and by lakes on object stores (listing with ETags,
:mod:`bloomskip.sources.files`).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from bloomskip.errors import SourceError

#: URL schemes of object stores, and pyarrow's file system names for them.
SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "adl", "memory")
PYARROW_TO_URL = {"s3": "s3", "gcs": "gs", "abfs": "az"}


def open_store(url: str) -> Any:
    """An obstore store rooted at ``url``; SourceError (one line) if it cannot be made."""
    try:
        from obstore.store import from_url
    except ImportError as e:  # pragma: no cover - a dependency
        raise SourceError(f"{url}: object stores need obstore ({e})") from None
    options = {}
    if os.environ.get("AWS_ALLOW_HTTP", "").lower() in ("1", "true") or os.environ.get(
        "AWS_ENDPOINT_URL", ""
    ).startswith("http://"):
        options["allow_http"] = True
    try:
        return from_url(url, client_options=options or None)
    except Exception as e:  # obstore's errors, configuration errors: one line
        raise SourceError(f"{url}: cannot open the object store: {first_line(e)}") from None


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def mtime_ns(when: datetime) -> int:
    """A last-modified time as nanoseconds since the epoch (exactly, no float)."""
    return (int(when.timestamp()) * 10**6 + when.microsecond) * 1000


__all__ = ["PYARROW_TO_URL", "SCHEMES", "first_line", "mtime_ns", "open_store"]
