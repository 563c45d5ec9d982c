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
import re
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
    """An error as one line: its first, without a response body (the service's error code
    kept) or timings, and what it most likely means when that is known (a missing bucket,
    no credentials, refused credentials)."""
    text = str(e).strip()
    if not text:
        return type(e).__name__
    line = text.splitlines()[0].split(": <?xml", 1)[0]  # S3's body follows on the next lines
    line = _TIMING.sub("", line)
    code = _CODE.search(text)
    if code and code.group(1) not in line:
        line += f" ({code.group(1)})"
    hint = next((h for words, h in _HINTS if any(w in text for w in words)), None)
    return f"{line}; {hint}" if hint else line


_CODE = re.compile(r"<Code>([A-Za-z0-9.]{1,64})</Code>")
_TIMING = re.compile(r" in \d+(?:\.\d+)?(?:ns|µs|us|ms|s)\b")
_HINTS = (
    (("NoSuchBucket",), "the bucket does not exist"),
    (
        ("/latest/api/token", "/latest/meta-data", "169.254.169.254"),
        "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
        "AWS_WEB_IDENTITY_TOKEN_FILE), or run where an instance role answers",
    ),
    (
        ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"),
        "access refused (the credentials, or what they may do)",
    ),
)


def mtime_ns(when: datetime) -> int:
    """A last-modified time as nanoseconds since the epoch (exactly, no float)."""
    return (int(when.timestamp()) * 10**6 + when.microsecond) * 1000


__all__ = ["PYARROW_TO_URL", "SCHEMES", "first_line", "mtime_ns", "open_store"]
