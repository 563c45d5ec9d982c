"""The key options of encrypted Parquet files (``inspect``, ``probe``, ``prune``,
``add-bloom``), and the :class:`~bloomskip.parquet.crypto.Decryption` built from them.

Parquet modular encryption: a footer key and column keys given in hex, or master keys
(base64) that unwrap the key-tools envelopes of parquet-java and pyarrow files, as
parquet-java's ``InMemoryKMS`` does. ``--keys FILE`` gives the same as JSON.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
from typing import Any

from bloomskip.cli import args as types
from bloomskip.errors import InvalidParameterError

KEYS_HELP = """encrypted Parquet files (modular encryption):
  --footer-key HEX          the footer key (also the key of columns encrypted with it)
  --column-key COL=HEX      a column's key (repeatable)
  --master-key ID=BASE64    a master key for files written with key tools (Spark's
                            PropertiesDrivenCryptoFactory, pyarrow's CryptoFactory):
                            their wrapped keys are unwrapped in memory, as parquet-java's
                            InMemoryKMS does (parquet.encryption.key.list format)
  --aad-prefix TEXT         the AAD prefix of a file that does not store it
  --keys FILE               the same as JSON: {"footer_key": "00ff..", "column_keys":
                            {"ssn": "..."}, "master_keys": {"kf": "base64.."},
                            "aad_prefix": "..."}
A column whose key is not given is reported as locked and never prunes a row group."""

#: Largest keys file read.
MAX_KEYS_FILE = 1 << 20


def add_key_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("keys of encrypted Parquet files (more below)")
    g.add_argument("--footer-key", metavar="HEX", type=types.hex_key, help="the footer key")
    g.add_argument(
        "--column-key", action="append", metavar="COL=HEX", type=types.column_key,
        help="a column's key (repeatable)",
    )  # fmt: skip
    g.add_argument(
        "--master-key", action="append", metavar="ID=BASE64", type=types.master_key,
        help="a master key of a key-tools KMS (repeatable)",
    )  # fmt: skip
    g.add_argument(
        "--aad-prefix", metavar="TEXT", type=types.utf8_text,
        help="the AAD prefix of a file that does not store it",
    )  # fmt: skip
    g.add_argument("--keys", metavar="FILE", type=types.keys_file, help="the keys as JSON")


def _read_keys(path: str) -> dict[str, Any]:
    with open(path, "rb") as fh:
        raw = fh.read(MAX_KEYS_FILE + 1)
    if len(raw) > MAX_KEYS_FILE:
        raise InvalidParameterError(f"{path}: a keys file holds at most {MAX_KEYS_FILE:,} B")
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise InvalidParameterError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise InvalidParameterError(f"{path}: not a JSON object")
    for name in ("footer_key", "aad_prefix"):
        if doc.get(name) is not None and not isinstance(doc[name], str):
            raise InvalidParameterError(f"{path}: {name} must be a string")
    for name in ("column_keys", "master_keys"):
        value = doc.get(name)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise InvalidParameterError(f"{path}: {name} must map names to strings")
    return doc


def _check(convert, text: str, where: str):
    try:
        return convert(text)
    except argparse.ArgumentTypeError as e:
        raise InvalidParameterError(f"{where}: {e}") from None


def decryption(args: argparse.Namespace):
    """A ``Decryption`` from the key options, or None when none is given."""
    doc = _read_keys(args.keys) if getattr(args, "keys", None) else {}
    where = args.keys or ""
    footer = args.footer_key or (
        _check(types.hex_key, doc["footer_key"], f"{where}: footer_key")
        if doc.get("footer_key")
        else None
    )
    columns = {
        str(k): _check(types.hex_key, v, f"{where}: key of column {k}")
        for k, v in (doc.get("column_keys") or {}).items()
    }
    columns.update(dict(args.column_key or []))
    masters: dict[str, bytes] = {}
    for name, value in (doc.get("master_keys") or {}).items():
        try:
            masters[str(name)] = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidParameterError(f"{where}: master key {name}: not base64") from None
    masters.update(dict(args.master_key or []))
    aad = args.aad_prefix if args.aad_prefix is not None else doc.get("aad_prefix")
    if aad is not None:
        aad = _check(types.utf8_text, aad, f"{where}: aad_prefix")
    if not (footer or columns or masters or aad is not None):
        return None
    from bloomskip.parquet.crypto import Decryption
    from bloomskip.parquet.keytools import InMemoryKms, KeyToolsRetriever

    return Decryption(
        footer_key=bytes.fromhex(footer) if footer else None,
        column_keys={k: bytes.fromhex(v) for k, v in columns.items()},
        key_retriever=KeyToolsRetriever(InMemoryKms(masters)) if masters else None,
        aad_prefix=aad.encode("utf-8") if aad is not None else None,
    )


__all__ = ["KEYS_HELP", "add_key_options", "decryption"]
