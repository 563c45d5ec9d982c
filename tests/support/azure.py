"""An Azure Blob Storage API server on loopback for the tests: Azurite, Microsoft's
emulator, started as a child process (``make test`` installs it with npm into
``tests/support/azurite/node_modules``; without it the Azure tests are skipped).

:func:`azurite_server` starts its blob service on ``127.0.0.1`` and a free port, kept in
memory, telemetry off, and points the standard variables at it as a user points them at
an emulator (``AZURE_STORAGE_USE_EMULATOR``, ``AZURITE_BLOB_STORAGE_URL``, the emulator's
public account and key; a second account, ``acct2``, is served too); obstore (indexes,
listings) and bloomskip's pyarrow Azure file system (reading lakes) both read them.
Azurite answers ``If-None-Match: *`` with 409 on an existing blob, which index commits
rely on. Nothing ever leaves the machine.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pyarrow.fs as pafs

from bloomskip.objstore import EMULATOR_ACCOUNT, EMULATOR_KEY
from tests.support.stores import Store, environment, free_port

AZURITE = Path(__file__).parent / "azurite" / "node_modules" / ".bin" / "azurite-blob"
#: A second account (same key), which the environment does not name.
OTHER_ACCOUNT = "acct2"


@dataclass
class Azure(Store):
    scheme: ClassVar[str] = "az"
    port: int
    root: str

    def fs(self, account: str = EMULATOR_ACCOUNT) -> pafs.AzureFileSystem:
        where = f"127.0.0.1:{self.port}"
        return pafs.AzureFileSystem(
            account,
            account_key=EMULATOR_KEY,
            blob_storage_authority=where,
            dfs_storage_authority=where,
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )


@contextlib.contextmanager
def azurite_server() -> Iterator[Azure]:
    """Azurite's blob service for the block; raises FileNotFoundError if not installed."""
    if not AZURITE.exists():
        raise FileNotFoundError(f"{AZURITE} (make test installs it with npm)")
    port = free_port()
    args = [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port)]
    args += ["--inMemoryPersistence", "--disableTelemetry", "--loose", "--skipApiVersionCheck"]
    accounts = f"{EMULATOR_ACCOUNT}:{EMULATOR_KEY};{OTHER_ACCOUNT}:{EMULATOR_KEY}"
    proc = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "AZURITE_ACCOUNTS": accounts},
    )
    env = {
        "AZURE_STORAGE_USE_EMULATOR": "true",
        "AZURITE_BLOB_STORAGE_URL": f"http://127.0.0.1:{port}",
        "AZURE_STORAGE_ACCOUNT_NAME": EMULATOR_ACCOUNT,
        "AZURE_STORAGE_ACCOUNT_KEY": EMULATOR_KEY,
    }
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Azurite did not start (exit code {proc.poll()})")
            time.sleep(0.1)
        with environment(env):
            azure = Azure(port, "bloomskip-tests")
            azure.fs().create_dir(azure.root)
            azure.fs(OTHER_ACCOUNT).create_dir(azure.root)
            yield azure
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()


__all__ = ["AZURITE", "OTHER_ACCOUNT", "Azure", "azurite_server"]
