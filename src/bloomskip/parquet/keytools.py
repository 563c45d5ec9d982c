"""The Parquet key-tools envelope: key metadata and key material of files written through
parquet-java's ``PropertiesDrivenCryptoFactory`` (Spark) and pyarrow's ``CryptoFactory``,
and the KMS client interface the caller implements to unwrap their keys.

The format (parquet-java ``org.apache.parquet.crypto.keytools``: ``KeyMetadata``,
``KeyMaterial``, ``FileKeyUnwrapper``, ``KeyToolkit``; the same in Arrow C++):

* a column's or the footer's ``key_metadata`` is UTF-8 JSON with ``"keyMaterialType":
  "PKMT1"``; with ``"internalStorage": true`` it *is* the key material, otherwise it holds
  a ``"keyReference"`` into an external key material store (a JSON object key id ->
  key material, by default a file ``_KEY_MATERIAL_FOR_<file name>.json`` next to the file);
* key material: ``isFooterKey``, ``masterKeyID``, ``wrappedDEK``, ``doubleWrapping``; the
  footer key's also names the KMS (``kmsInstanceID``, ``kmsInstanceURL``);
* single wrapping: the data key (DEK) is ``kms.unwrap_key(wrappedDEK, masterKeyID)``;
* double wrapping (the default): ``kms.unwrap_key(wrappedKEK, masterKeyID)`` gives a key
  encryption key (KEK), and the DEK is ``wrappedDEK`` decrypted locally with it - base64
  of ``nonce | ciphertext | tag`` under AES-GCM with the KEK id (base64-decoded
  ``keyEncryptionKeyID``) as AAD.

:class:`KmsClient` is the interface (the method names of ``pyarrow.parquet.encryption.
KmsClient``, so a pyarrow KMS client works as is). :class:`InMemoryKms` wraps keys
locally with master keys it is given, as parquet-java's test ``InMemoryKMS`` does (AES-GCM,
master key id as AAD): for development, tests and the command line, not for production.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from bloomskip.errors import CorruptFileError, DecryptionError, InvalidParameterError
from bloomskip.parquet.aes import check_key, gcm_decrypt, gcm_encrypt

KEY_MATERIAL_TYPE = "PKMT1"
KEY_MATERIAL_FILE_PREFIX = "_KEY_MATERIAL_FOR_"


@runtime_checkable
class KmsClient(Protocol):
    """What bloomskip needs from a KMS: unwrap (and, to write, wrap) data keys."""

    def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes: ...

    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str: ...


def wrap_key_locally(key: bytes, master_key: bytes, aad: bytes) -> str:
    """base64 of ``nonce | ciphertext | tag``: ``key`` under AES-GCM with ``master_key``."""
    return base64.b64encode(gcm_encrypt(check_key(master_key, "master key"), key, aad)).decode()


def unwrap_key_locally(wrapped: str, master_key: bytes, aad: bytes, what: str = "key") -> bytes:
    """The key :func:`wrap_key_locally` wrapped; DecryptionError for a wrong master key."""
    try:
        blob = base64.b64decode(wrapped, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise CorruptFileError(f"{what}: wrapped key is not base64") from None
    return gcm_decrypt(check_key(master_key, "master key"), blob, aad, what)


class InMemoryKms:
    """A KMS whose master keys are in memory (id -> 16, 24 or 32 bytes).

    Wraps as parquet-java's test ``InMemoryKMS`` (``parquet.encryption.key.list``) does:
    AES-GCM with the master key and the master key id as AAD, base64.
    """

    def __init__(self, master_keys: Mapping[str, bytes]) -> None:
        self.master_keys = {k: check_key(v, f"master key {k}") for k, v in master_keys.items()}

    @classmethod
    def from_key_list(cls, key_list: str) -> InMemoryKms:
        """From ``"id1:base64key1, id2:base64key2"`` (``parquet.encryption.key.list``)."""
        keys: dict[str, bytes] = {}
        for entry in filter(None, (e.strip() for e in key_list.split(","))):
            name, sep, value = entry.partition(":")
            try:
                if not sep or not name.strip():
                    raise ValueError
                keys[name.strip()] = base64.b64decode(value.strip(), validate=True)
            except (binascii.Error, ValueError):
                raise InvalidParameterError(
                    f"master key entry {entry!r} is not 'id:base64key'"
                ) from None
        return cls(keys)

    def _master(self, master_key_identifier: str) -> bytes:
        try:
            return self.master_keys[master_key_identifier]
        except KeyError:
            raise KeyError(f"no master key {master_key_identifier!r}") from None

    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str:
        aad = master_key_identifier.encode("utf-8")
        return wrap_key_locally(key_bytes, self._master(master_key_identifier), aad)

    def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes:
        aad = master_key_identifier.encode("utf-8")
        what = f"data key wrapped with master key {master_key_identifier!r}"
        return unwrap_key_locally(wrapped_key, self._master(master_key_identifier), aad, what)


def _json(raw: bytes | str, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise CorruptFileError(f"{what} is not key-tools JSON") from None
    if not isinstance(doc, dict) or doc.get("keyMaterialType") != KEY_MATERIAL_TYPE:
        raise CorruptFileError(f"{what} is not {KEY_MATERIAL_TYPE} key material")
    return doc


def _text(doc: Mapping[str, Any], name: str, what: str) -> str:
    v = doc.get(name)
    if not isinstance(v, str):
        raise CorruptFileError(f"{what}: {name} is missing")
    return v


def load_key_material_store(parquet_path: str | os.PathLike) -> dict[str, str]:
    """The external key material of a file (``_KEY_MATERIAL_FOR_<name>.json`` beside it)."""
    path = os.fspath(parquet_path)
    store = os.path.join(
        os.path.dirname(path), KEY_MATERIAL_FILE_PREFIX + os.path.basename(path) + ".json"
    )
    with open(store, "rb") as fh:
        doc = json.loads(fh.read())
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise CorruptFileError(f"{store}: not a key material store")
    return doc


class KeyToolsRetriever:
    """A key retriever (``key_metadata`` -> key) for key-tools files, unwrapping with a KMS.

    KEKs are cached per KEK id, as parquet-java's ``FileKeyUnwrapper`` does, so a file
    with many columns under one master key costs one KMS call.
    """

    def __init__(self, kms_client: Any, *, key_material: Mapping[str, str] | None = None):
        if not callable(getattr(kms_client, "unwrap_key", None)):
            raise InvalidParameterError("a KMS client needs an unwrap_key(wrapped, id) method")
        self.kms = kms_client
        self.key_material = dict(key_material or {})
        self._keks: dict[str, bytes] = {}

    def material(self, key_metadata: bytes) -> dict[str, Any]:
        """The key material a ``key_metadata`` holds or refers to."""
        doc = _json(key_metadata, "key metadata")
        if doc.get("internalStorage") is True:
            return doc
        ref = _text(doc, "keyReference", "key metadata")
        if ref not in self.key_material:
            raise KeyError(f"external key material {ref!r} was not given (key_material=...)")
        return _json(self.key_material[ref], f"key material {ref!r}")

    def __call__(self, key_metadata: bytes) -> bytes:
        m = self.material(key_metadata)
        master = _text(m, "masterKeyID", "key material")
        wrapped_dek = _text(m, "wrappedDEK", "key material")
        if m.get("doubleWrapping") is not True:
            return _as_key(self.kms.unwrap_key(wrapped_dek, master), master)
        kek_id = _text(m, "keyEncryptionKeyID", "key material")
        kek = self._keks.get(kek_id)
        if kek is None:
            kek = _as_key(
                self.kms.unwrap_key(_text(m, "wrappedKEK", "key material"), master), master
            )
            self._keks[kek_id] = kek
        try:
            aad = base64.b64decode(kek_id, validate=True)
        except (binascii.Error, ValueError):
            raise CorruptFileError("key material: keyEncryptionKeyID is not base64") from None
        return unwrap_key_locally(wrapped_dek, kek, aad, f"data key under master key {master!r}")


def _as_key(value: Any, master: str) -> bytes:
    if isinstance(value, bytearray | memoryview):
        value = bytes(value)
    if not isinstance(value, bytes):
        raise DecryptionError(f"the KMS returned {type(value).__name__} for master key {master!r}")
    return check_key(value, f"key unwrapped with master key {master!r}")


__all__ = [
    "InMemoryKms",
    "KeyToolsRetriever",
    "KmsClient",
    "load_key_material_store",
    "unwrap_key_locally",
    "wrap_key_locally",
]
