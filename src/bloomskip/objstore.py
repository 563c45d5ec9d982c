"""Object stores through obstore (the Python binding of Rust's ``object_store``): one way
to open a store for a URL, configured as users configure their clients.

Credentials, region and endpoint come from the standard environment variables
(``AWS_ACCESS_KEY_ID``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_
CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``, ...). A plain-http endpoint is allowed when
``AWS_ALLOW_HTTP`` or ``AZURE_ALLOW_HTTP`` is true, or an endpoint variable says
``http://`` (Azurite, the Azure emulator, with ``AZURE_STORAGE_USE_EMULATOR=true``). Used by
index storage (:mod:`bloomskip.index.storage`) and by lakes on object stores (listing with
ETags, :mod:`bloomskip.sources.files`).

Lakes are read through ``pyarrow.fs`` (:func:`filesystem`). pyarrow's S3 and GCS file
systems read the same variables; its Azure one reads none, so for ``az://`` (and
``abfs[s]://``) it is made here from the variables obstore reads: account name and key or
SAS token, the emulator switch, the endpoint, a service principal. Credentials are never
taken from a URI's query (``?secret_key=``, a SAS ``sig=``): a lake's URI is stored in
its index, so such a URI is refused, with the variable to use instead.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bloomskip.errors import SourceError

#: URL schemes of object stores, and pyarrow's file system names for them.
SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "adl", "memory")
PYARROW_TO_URL = {"s3": "s3", "gcs": "gs", "abfs": "az"}


#: A request whose connection stays silent this long fails (and is retried): a store
#: that accepts connections and never answers fails in about a minute, not obstore's 3.
STALL_S = 15
#: Retries of a failed request (AWS's SDKs make 3 attempts in all) and how long after
#: the first attempt the last may start.
RETRIES, RETRY_S = 3, 60


def open_store(url: str, **config: str) -> Any:
    """An obstore store rooted at ``url`` (``config``: obstore's settings beyond the
    environment's, as ``account_name``); SourceError (one line) if it cannot be made."""
    try:
        from obstore.store import from_url
    except ImportError as e:  # pragma: no cover - a dependency
        raise SourceError(f"{url}: object stores need obstore ({e})") from None
    options: dict[str, Any] = {"read_timeout": timedelta(seconds=STALL_S)}
    if _allow_http():
        options["allow_http"] = True
    retry = {"max_retries": RETRIES, "retry_timeout": timedelta(seconds=RETRY_S)}
    try:
        return from_url(url, client_options=options, retry_config=retry, **config)
    except Exception as e:  # obstore's errors, configuration errors: one line
        raise SourceError(f"{url}: cannot open the object store: {first_line(e)}") from None


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def _allow_http() -> bool:
    return (
        _true("AWS_ALLOW_HTTP")
        or _true("AZURE_ALLOW_HTTP")
        or _true("AZURE_STORAGE_USE_EMULATOR")
        or any(os.environ.get(v, "").startswith("http://") for v in _ENDPOINTS)
    )


_ENDPOINTS = ("AWS_ENDPOINT_URL", "AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT")
#: A URI's query parameters that carry a secret (pyarrow's S3 keys, an Azure SAS).
_SECRETS = frozenset(
    {"access_key", "secret_key", "session_token", "sig", "account_key", "client_secret"}
)
#: Azurite's documented, public development account.
EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def filesystem(uri: str) -> tuple[Any, str]:
    """``uri`` as a ``pyarrow.fs`` file system and a path in it (``bucket/key`` on object
    stores); SourceError (one line) if it cannot be opened or carries a credential."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    parts = urlsplit(uri)
    secret = sorted({k.lower() for k, _ in parse_qsl(parts.query)} & _SECRETS)
    if secret:
        raise SourceError(
            f"{parts.scheme}://{parts.netloc}{parts.path}: a credential in the URI "
            f"({', '.join(secret)}) would be stored in the index; give it in the environment "
            "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, "
            "AZURE_STORAGE_SAS_TOKEN, ...)"
        )
    scheme = parts.scheme.lower()
    try:
        if scheme in ("az", "azure", "abfs", "abfss"):
            return _azure(parts)
        if scheme in ("s3a", "s3n"):
            uri = "s3://" + uri.split("://", 1)[1]
        return pafs.FileSystem.from_uri(uri)
    except (OSError, ValueError, pa.ArrowException) as e:
        raise SourceError(
            f"{uri}: not a file system URI pyarrow can open: {first_line(e)}"
        ) from None


def _azure(parts) -> tuple[Any, str]:
    """pyarrow's Azure file system for ``az://container/path`` or
    ``abfs[s]://container@account.dfs.core.windows.net/path``, configured by the
    environment as obstore is."""
    import pyarrow.fs as pafs

    env = os.environ.get
    container = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else parts.netloc
    emulator = _true("AZURE_STORAGE_USE_EMULATOR")
    account = (
        azure_account(parts.geturl())
        or env("AZURE_STORAGE_ACCOUNT_NAME")
        or (EMULATOR_ACCOUNT if emulator else "")
    )
    if not container or not account:
        raise ValueError(
            "name the container (az://container/path) and the account "
            "(AZURE_STORAGE_ACCOUNT_NAME, or abfss://container@account.dfs.core.windows.net/)"
        )
    options: dict[str, str] = {}
    key = next(
        (
            env(v)
            for v in (
                "AZURE_STORAGE_ACCOUNT_KEY",
                "AZURE_STORAGE_ACCESS_KEY",
                "AZURE_STORAGE_MASTER_KEY",
            )
            if env(v)
        ),
        None,
    )
    sas = env("AZURE_STORAGE_SAS_TOKEN") or env("AZURE_STORAGE_SAS_KEY")
    if key:
        options["account_key"] = key
    elif sas:
        options["sas_token"] = sas.lstrip("?")
    elif emulator:
        options["account_key"] = EMULATOR_KEY
    principal = [env(v) for v in ("AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID")]
    if not options and all(principal):
        options.update(zip(("client_id", "client_secret", "tenant_id"), principal, strict=True))
    endpoint = (
        env("AZURITE_BLOB_STORAGE_URL") or "http://127.0.0.1:10000"
        if emulator
        else env("AZURE_STORAGE_ENDPOINT") or env("AZURE_ENDPOINT")
    )
    if endpoint:
        e = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
        # pyarrow puts the account before an authority starting with "." and after others
        authority = e.netloc
        if authority.startswith(account + "."):
            authority = authority[len(account) :]
        dfs = authority.replace(".blob.", ".dfs.") if authority.startswith(".") else authority
        options.update(
            blob_storage_authority=authority,
            dfs_storage_authority=dfs,
            blob_storage_scheme=e.scheme or "https",
            dfs_storage_scheme=e.scheme or "https",
        )
    fs = pafs.AzureFileSystem(account, **options)
    return fs, f"{container}/{parts.path.strip('/')}".rstrip("/")


def azure_account(uri: str) -> str | None:
    """The account an ``abfs[s]://container@account.dfs.core.windows.net/`` URI names
    (None for ``az://container/``, whose account the environment gives). The form with
    an endpoint's host and port (``abfs://account@127.0.0.1:10000/container/``) is
    refused (ValueError): the endpoint comes from the environment, as obstore takes it."""
    netloc = urlsplit(uri).netloc
    if "@" not in netloc:
        return None
    host = netloc.rpartition("@")[2]
    if ":" in host or host.replace(".", "").isdigit() or "." not in host:
        raise ValueError(
            "an abfs URI names container@account.dfs.core.windows.net; for another endpoint "
            "write az://container/path and set AZURE_STORAGE_ENDPOINT (or, for Azurite, "
            "AZURE_STORAGE_USE_EMULATOR=true)"
        )
    return host.split(".", 1)[0]


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
    (("ContainerNotFound",), "the container does not exist"),
    (
        (
            "InvalidAccessKeyId",
            "SignatureDoesNotMatch",
            "AccessDenied",
            "AuthorizationFailure",
            "AuthenticationFailed",
            "AuthorizationPermissionMismatch",
        ),
        "access refused (the credentials, or what they may do)",
    ),
    (
        ("builder error",),
        "a plain-http endpoint needs AWS_ALLOW_HTTP=true or AZURE_ALLOW_HTTP=true",
    ),
    (
        ("error sending request", "operation timed out", "Connection refused"),
        "the store did not answer (check the endpoint: AWS_ENDPOINT_URL, "
        "AZURE_STORAGE_ENDPOINT, or the network)",
    ),
)


def mtime_ns(when: datetime) -> int:
    """A last-modified time as nanoseconds since the epoch (exactly, no float)."""
    return (int(when.timestamp()) * 10**6 + when.microsecond) * 1000


__all__ = [
    "PYARROW_TO_URL",
    "SCHEMES",
    "azure_account",
    "filesystem",
    "first_line",
    "mtime_ns",
    "open_store",
]
