"""Parquet modular encryption: module AADs, the AES-GCM and AES-CTR module ciphers, and the
per-file decryptor that hands keys and ciphers to the readers and writers.

Follows parquet-format ``Encryption.md`` (and ``BloomFilter.md``, "Encryption"); the facts
were checked against parquet-java's ``org.apache.parquet.crypto`` (``AesCipher``,
``AesGcmEncryptor``/``Decryptor``, ``AesCtrDecryptor``, ``InternalFileDecryptor``):

* every encrypted module is ``length (4 bytes LE) | nonce (12) | ciphertext | tag (16)``
  under AES-GCM; under ``AES_GCM_CTR_V1`` the *pages* (module types 2 and 3) are
  ``length | nonce (12) | ciphertext`` under AES-CTR with IV ``nonce | 00 00 00 01``,
  and every other module (footer, ColumnMetaData, page headers, bloom filter header and
  bitset) is still AES-GCM;
* a module's AAD is the file AAD (``aad_prefix`` + ``aad_file_unique``) + the module type
  (1 byte) + the row group ordinal and the column ordinal (2 bytes LE each, all modules
  but the footer) + the page ordinal (2 bytes LE, data pages and their headers only);
* encrypted footer mode: the file ends ``FileCryptoMetaData | footer module | length |
  "PARE"``; plaintext footer mode: ``FileMetaData | nonce | tag | length | "PAR1"``, the
  tag being AES-GCM of the serialized footer with the footer key and the footer AAD;
* a column encrypted with its own key (or any encrypted column under a plaintext footer)
  stores its ``ColumnMetaData`` as an encrypted module in ``ColumnChunk`` field 9
  (``encrypted_column_metadata``); under a plaintext footer field 3 keeps a copy without
  statistics, which bloomskip never uses for an encrypted column.

Keys come from :class:`Decryption`: explicit footer and column keys, a key retriever
(``key_metadata`` bytes -> key) and/or a KMS client through the key-tools envelope
(:mod:`bloomskip.parquet.keytools`). A column whose key is missing is *locked*: readers see
no metadata for it and say why. A GCM tag that does not verify raises
:class:`~bloomskip.errors.DecryptionError`; nothing decrypted under a failed tag is used.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from bloomskip.errors import (
    CorruptFileError,
    DecryptionError,
    MissingKeyError,
    UnsupportedFileError,
)
from bloomskip.parquet.aes import (
    AES_GCM_CTR_V1,
    AES_GCM_V1,
    ALGORITHMS,
    BLOOM_FILTER_BITSET,
    BLOOM_FILTER_HEADER,
    COLUMN_META_DATA,
    DATA_PAGE,
    DICTIONARY_PAGE,
    FOOTER,
    NONCE_LENGTH,
    TAG_LENGTH,
    check_key,
    ctr_decrypt,
    frame,
    gcm_decrypt,
    gcm_encrypt,
    module_aad,
    read_framed,
    unframe,
)
from bloomskip.parquet.thrift import BINARY, I32, I64, STRUCT, List, Struct, decode_struct

if TYPE_CHECKING:
    from bloomskip.parquet.keytools import KmsClient

#: ``key_metadata`` bytes -> key bytes, or None when this caller has no such key.
KeyRetriever = Callable[[bytes], "bytes | None"]


# ------------------------------------------------------------------------- properties


@dataclass
class Decryption:
    """How to decrypt a file: keys (explicit, by key metadata, or through a KMS).

    * ``footer_key``: the footer key (also the key of columns encrypted with it);
    * ``column_keys``: column key by column path (``"address.city"``);
    * ``key_retriever``: ``key_metadata`` bytes -> key (or None), for the footer and for
      every column not in ``column_keys`` - e.g. :class:`~bloomskip.parquet.keytools.
      KeyToolsRetriever`, which unwraps the key-tools envelope of parquet-java and pyarrow
      files with a KMS client (see :meth:`from_kms`);
    * ``aad_prefix``: for files written with an AAD prefix they did not store; if the file
      stores one too, they must be equal;
    * ``check_footer_signature``: verify a plaintext footer's signature (this needs the
      footer key: without it, :class:`~bloomskip.errors.MissingKeyError` unless this is
      False). Without any ``Decryption`` a plaintext footer is read unverified, as a
      reader unaware of encryption would, and only its plaintext columns are usable.

    A retriever that returns None or raises ``KeyError``/:class:`MissingKeyError` means
    "no key": that column is locked (never read, never used to prune) and the footer is
    then unreadable. Any other exception from a retriever is reported the same way, with
    its message, except :class:`~bloomskip.errors.DecryptionError` (a wrong key), which
    propagates.
    """

    footer_key: bytes | None = None
    column_keys: Mapping[str, bytes] = field(default_factory=dict)
    key_retriever: KeyRetriever | None = None
    aad_prefix: bytes | None = None
    check_footer_signature: bool = True

    def __post_init__(self) -> None:
        if self.footer_key is not None:
            self.footer_key = check_key(self.footer_key, "footer key")
        self.column_keys = {
            str(k): check_key(v, f"key of column {k}") for k, v in dict(self.column_keys).items()
        }
        if isinstance(self.aad_prefix, str):
            self.aad_prefix = self.aad_prefix.encode("utf-8")

    @classmethod
    def from_kms(
        cls,
        kms_client: KmsClient,
        *,
        footer_key: bytes | None = None,
        column_keys: Mapping[str, bytes] | None = None,
        aad_prefix: bytes | None = None,
        key_material: Mapping[str, str] | None = None,
    ) -> Decryption:
        """Keys from the key-tools envelope (``PKMT1`` key material, wrapped DEKs, double
        wrapping with KEKs) unwrapped by ``kms_client`` - any object with
        ``unwrap_key(wrapped: str, master_key_id: str) -> bytes``, e.g. a
        ``pyarrow.parquet.encryption.KmsClient``. ``key_material`` is the external key
        material store (key id in file -> key material JSON) of files written with
        ``parquet.encryption.key.material.store.internally=false``."""
        from bloomskip.parquet.keytools import KeyToolsRetriever

        return cls(
            footer_key=footer_key,
            column_keys=column_keys or {},
            key_retriever=KeyToolsRetriever(kms_client, key_material=key_material),
            aad_prefix=aad_prefix,
        )


# ------------------------------------------------------------------------- file decryptor


def _union_member(value: Any) -> tuple[int, Struct] | None:
    """(member id, member struct) of a one-member Thrift union struct, else None."""
    if not isinstance(value, Struct) or len(value.fields) != 1:
        return None
    f = value.fields[0]
    return (f.id, f.value) if f.type == STRUCT else None


def _retrieval_failure(e: Exception) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _show_metadata(key_metadata: bytes | None) -> str:
    if not key_metadata:
        return "no key metadata"
    try:  # key-tools JSON: its master key id says enough
        master = json.loads(key_metadata).get("masterKeyID")
    except (ValueError, UnicodeDecodeError, AttributeError):
        master = None
    if isinstance(master, str):
        return f"master key {master!r}"
    text = key_metadata[:120].decode("utf-8", "backslashreplace")
    return f"key metadata {text!r}{'...' if len(key_metadata) > 120 else ''}"


class FileDecryptor:
    """The encryption state of one file: algorithm, file AAD and keys (cached)."""

    def __init__(
        self,
        props: Decryption | None,
        algorithm: Any,
        footer_key_metadata: bytes | None,
        *,
        encrypted_footer: bool,
        label: str,
    ) -> None:
        self.props = props
        self.label = label
        self.encrypted_footer = encrypted_footer
        self.footer_key_metadata = footer_key_metadata if footer_key_metadata else None
        member = _union_member(algorithm)
        if member is None or member[0] not in ALGORITHMS:
            raise UnsupportedFileError(
                f"{label}: unknown encryption algorithm (only AES_GCM_V1 and AES_GCM_CTR_V1 "
                "are defined)"
            )
        self.algorithm = ALGORITHMS[member[0]]
        params = member[1]
        stored_prefix = params.get(1)
        unique = params.get(2)
        supply = params.get(3) is True
        given = props.aad_prefix if props is not None else None
        if stored_prefix is not None and not isinstance(stored_prefix, bytes):
            raise CorruptFileError(f"{label}: aad_prefix is not binary")
        if unique is not None and not isinstance(unique, bytes):
            raise CorruptFileError(f"{label}: aad_file_unique is not binary")
        if supply and given is None:
            raise MissingKeyError(
                f"{label}: the file was encrypted with an AAD prefix it does not store; "
                "pass Decryption(aad_prefix=...)"
            )
        if stored_prefix is not None and given is not None and stored_prefix != given:
            raise DecryptionError(
                f"{label}: the AAD prefix given ({given!r}) is not the one in the file "
                f"({stored_prefix!r})"
            )
        prefix = given if given is not None else (stored_prefix or b"")
        self.file_aad: bytes = prefix + (unique or b"")
        self._footer_key: bytes | None = None
        self._footer_key_reason: str | None = None
        self._keys: dict[tuple[tuple[str, ...], bytes | None], tuple[bytes | None, str]] = {}
        #: how the footer is protected: "authenticated (AES-GCM)" for an encrypted footer,
        #: "signature verified", or why a plaintext footer's signature was not checked
        self.signature = "authenticated (AES-GCM)" if encrypted_footer else "not checked"

    # -- keys ---------------------------------------------------------------------------

    def _retrieve(self, key_metadata: bytes | None, what: str) -> tuple[bytes | None, str]:
        retriever = self.props.key_retriever if self.props is not None else None
        if retriever is None:
            return None, f"{what}: no key given ({_show_metadata(key_metadata)})"
        try:
            key = retriever(key_metadata or b"")
        except DecryptionError as e:  # a wrong master key: never "no key"
            raise DecryptionError(f"{self.label}: {what}: {e}") from e
        except (KeyError, MissingKeyError, LookupError) as e:
            return None, f"{what}: no key ({_retrieval_failure(e)})"
        except Exception as e:  # a KMS client may raise anything: the column stays locked
            return None, f"{what}: key retrieval failed ({_retrieval_failure(e)})"
        if key is None:
            return None, f"{what}: the key retriever has no key ({_show_metadata(key_metadata)})"
        return check_key(key, f"{self.label}: {what}"), ""

    def footer_key(self) -> bytes | None:
        """The footer key, or None (then :attr:`footer_key_reason` says why)."""
        if self._footer_key is None and self._footer_key_reason is None:
            given = self.props.footer_key if self.props is not None else None
            if given is not None:
                self._footer_key = given
            else:
                key, why = self._retrieve(self.footer_key_metadata, "footer key")
                self._footer_key, self._footer_key_reason = key, (why or None)
        return self._footer_key

    @property
    def footer_key_reason(self) -> str:
        self.footer_key()
        return self._footer_key_reason or ""

    def require_footer_key(self) -> bytes:
        key = self.footer_key()
        if key is None:
            raise MissingKeyError(f"{self.label}: {self.footer_key_reason}")
        return key

    def column_key(
        self, path: tuple[str, ...], key_metadata: bytes | None
    ) -> tuple[bytes | None, str]:
        """(key, "") or (None, why) for a column encrypted with its own key."""
        cache_key = (path, key_metadata)
        if cache_key not in self._keys:
            name = ".".join(path)
            given = self.props.column_keys.get(name) if self.props is not None else None
            if given is not None:
                self._keys[cache_key] = (given, "")
            else:
                self._keys[cache_key] = self._retrieve(key_metadata, f"key of column {name}")
        return self._keys[cache_key]

    # -- footer -------------------------------------------------------------------------

    def decrypt_footer(self, body: bytes) -> bytes:
        key = self.require_footer_key()
        return gcm_decrypt(key, body, module_aad(self.file_aad, FOOTER), f"{self.label}: footer")

    def encrypt_footer(self, footer: bytes) -> bytes:
        """The framed encrypted footer module (fresh nonce)."""
        key = self.require_footer_key()
        return frame(gcm_encrypt(key, footer, module_aad(self.file_aad, FOOTER)))

    def sign_footer(self, footer: bytes) -> bytes:
        """``nonce | tag`` of a plaintext footer (fresh nonce)."""
        key = self.require_footer_key()
        sealed = gcm_encrypt(key, footer, module_aad(self.file_aad, FOOTER))
        return sealed[:NONCE_LENGTH] + sealed[-TAG_LENGTH:]

    def verify_signature(self, footer: bytes, signature: bytes) -> None:
        """Check a plaintext footer's signature when the footer key is at hand."""
        if self.props is None:
            self.signature = "signature not checked (no decryption properties)"
            return
        if not self.props.check_footer_signature:
            self.signature = "signature not checked (check_footer_signature=False)"
            return
        key = self.footer_key()
        if key is None:
            raise MissingKeyError(
                f"{self.label}: the plaintext footer's signature needs the footer key "
                f"({self.footer_key_reason}); pass it, or check_footer_signature=False "
                "to read with column keys only"
            )
        nonce, tag = signature[:NONCE_LENGTH], signature[NONCE_LENGTH:]
        sealed = gcm_encrypt(key, footer, module_aad(self.file_aad, FOOTER), nonce)
        if not hmac.compare_digest(sealed[-TAG_LENGTH:], tag):
            raise DecryptionError(
                f"{self.label}: the plaintext footer's signature does not verify (a wrong "
                "footer key or AAD prefix, or the footer was changed)"
            )
        self.signature = "signature verified"

    def chunk(self, chunk: Struct, row_group: int, column: int, name: str) -> ChunkCrypto:
        return ChunkCrypto(self, chunk, row_group, column, name)


class ChunkCrypto:
    """One encrypted column chunk: its key, its decrypted ColumnMetaData, module ciphers."""

    def __init__(
        self, file: FileDecryptor, chunk: Struct, row_group: int, column: int, name: str
    ) -> None:
        self.file = file
        self.chunk = chunk
        self.row_group = row_group  # ordinal used in AADs
        self.column = column
        self.name = name
        self.label = f"{file.label}: row group {row_group} column {name}"
        member = _union_member(chunk.get(8))
        if member is None or member[0] not in (1, 2):
            raise CorruptFileError(f"{self.label}: crypto_metadata is not a known union member")
        self.with_footer_key = member[0] == 1
        self.key_metadata: bytes | None = None
        self.path: tuple[str, ...] = tuple(name.split("."))
        if not self.with_footer_key:
            km = member[1].get(2)
            self.key_metadata = km if isinstance(km, bytes) else None
            p = member[1].get(1)
            if isinstance(p, List) and all(isinstance(x, bytes) for x in p.items):
                self.path = tuple(x.decode("utf-8", "replace") for x in p.items)
        self._meta: Struct | None = None

    # -- key ----------------------------------------------------------------------------

    def key(self) -> bytes | None:
        if self.with_footer_key:
            return self.file.footer_key()
        return self.file.column_key(self.path, self.key_metadata)[0]

    @property
    def locked(self) -> str | None:
        """Why this chunk cannot be read (its key is missing), or None if it can."""
        if self.key() is not None:
            return None
        if self.with_footer_key:
            why = self.file.footer_key_reason
        else:
            why = self.file.column_key(self.path, self.key_metadata)[1]
        return f"{self.name} is encrypted and cannot be read: {why}"

    @property
    def separate_metadata(self) -> bool:
        """Whether ColumnMetaData is its own encrypted module (field 9)."""
        return not (self.with_footer_key and self.file.encrypted_footer)

    def metadata(self) -> Struct | None:
        """The chunk's ColumnMetaData, decrypted; None when the key is missing."""
        if self._meta is not None:
            return self._meta
        key = self.key()
        if key is None:
            return None
        if not self.separate_metadata:
            md = self.chunk.get(3)
            if not isinstance(md, Struct):
                raise CorruptFileError(f"{self.label}: no ColumnMetaData in the footer")
            self._meta = md
            return md
        raw = self.chunk.get(9)
        if not isinstance(raw, bytes):
            raise CorruptFileError(f"{self.label}: encrypted column without its metadata")
        what = f"{self.label} ColumnMetaData"
        plain = gcm_decrypt(key, unframe(raw, what), self.aad(COLUMN_META_DATA), what)
        md, _ = decode_struct(plain, name=what)  # bytes after the struct are ignored
        self._meta = md
        return md

    # -- modules ------------------------------------------------------------------------

    def aad(self, module_type: int, page: int | None = None) -> bytes:
        return module_aad(self.file.file_aad, module_type, self.row_group, self.column, page)

    def _key(self) -> bytes:
        key = self.key()
        if key is None:
            raise MissingKeyError(self.locked or self.label)
        return key

    def decrypt(self, body: bytes, module_type: int, what: str, page: int | None = None) -> bytes:
        """A module body (no length prefix), GCM, or CTR for pages of AES_GCM_CTR_V1."""
        key = self._key()
        if module_type in (DATA_PAGE, DICTIONARY_PAGE) and self.file.algorithm == AES_GCM_CTR_V1:
            return ctr_decrypt(key, body, what)
        return gcm_decrypt(key, body, self.aad(module_type, page), what)

    def read_module(
        self,
        fh: BinaryIO,
        offset: int,
        limit: int,
        module_type: int,
        what: str,
        page: int | None = None,
    ) -> tuple[bytes, int]:
        """Read and decrypt the framed module at ``offset``: (plaintext, end offset)."""
        body, end = read_framed(fh, offset, limit, what)
        return self.decrypt(body, module_type, what, page), end

    def encrypt(self, plaintext: bytes, module_type: int) -> bytes:
        """A framed GCM module with a fresh nonce (metadata, headers, bloom filters)."""
        return frame(gcm_encrypt(self._key(), plaintext, self.aad(module_type)))

    def seal_metadata(self, fields: Mapping[int, tuple[int, Any]]) -> None:
        """Write the decrypted ColumnMetaData back into field 9 (a fresh module) after
        setting ``fields`` (id -> (type, value)) in it; the plaintext copy a plaintext
        footer keeps in field 3 gets the same fields, as parquet-java writes them."""
        md = self.metadata()
        if md is None:
            raise MissingKeyError(self.locked or self.label)
        for fid, (t, v) in fields.items():
            md.set(fid, t, v)
        if not self.separate_metadata:
            return
        from bloomskip.parquet.thrift import encode_struct

        self.chunk.set(9, BINARY, self.encrypt(encode_struct(md), COLUMN_META_DATA))
        redacted = self.chunk.get(3)
        if isinstance(redacted, Struct):
            for fid, (t, v) in fields.items():
                redacted.set(fid, t, v)


__all__ = [
    "AES_GCM_CTR_V1",
    "AES_GCM_V1",
    "BLOOM_FILTER_BITSET",
    "BLOOM_FILTER_HEADER",
    "I32",
    "I64",
    "ChunkCrypto",
    "Decryption",
    "FileDecryptor",
    "KeyRetriever",
    "module_aad",
]
