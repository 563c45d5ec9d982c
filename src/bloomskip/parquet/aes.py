"""Parquet modular encryption's primitives: module types and AADs, the AES-GCM and AES-CTR
module ciphers, framing, and key checks (parquet-format ``Encryption.md``, sections 4.1-4.4).

Everything here works on bytes and keys alone; :mod:`.crypto` reads files with it, and
:mod:`.keytools` wraps and unwraps keys with it.
"""

from __future__ import annotations

import os
import struct
from typing import Any, BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bloomskip.errors import CorruptFileError, DecryptionError, InvalidParameterError

# Module types (Encryption.md, section 4.4.2).
FOOTER = 0
COLUMN_META_DATA = 1
DATA_PAGE = 2
DICTIONARY_PAGE = 3
DATA_PAGE_HEADER = 4
DICTIONARY_PAGE_HEADER = 5
COLUMN_INDEX = 6
OFFSET_INDEX = 7
BLOOM_FILTER_HEADER = 8
BLOOM_FILTER_BITSET = 9

AES_GCM_V1 = "AES_GCM_V1"
AES_GCM_CTR_V1 = "AES_GCM_CTR_V1"
ALGORITHMS = {1: AES_GCM_V1, 2: AES_GCM_CTR_V1}

NONCE_LENGTH = 12
TAG_LENGTH = 16
LENGTH_BYTES = 4
GCM_OVERHEAD = LENGTH_BYTES + NONCE_LENGTH + TAG_LENGTH  # 32 bytes per GCM module
SIGNATURE_LENGTH = NONCE_LENGTH + TAG_LENGTH  # plaintext footer signature
_AES_KEY_LENGTHS = (16, 24, 32)


# ------------------------------------------------------------------------- primitives


def module_aad(
    file_aad: bytes,
    module_type: int,
    row_group: int | None = None,
    column: int | None = None,
    page: int | None = None,
) -> bytes:
    """The AAD of one module: file AAD, module type, then the ordinals the type takes."""
    aad = file_aad + bytes([module_type])
    if module_type == FOOTER:
        return aad
    for what, ordinal in (("row group", row_group), ("column", column)):
        if ordinal is None or not 0 <= ordinal <= 0x7FFF:
            raise InvalidParameterError(f"{what} ordinal {ordinal} is not in 0..32767")
        aad += struct.pack("<H", ordinal)
    if module_type in (DATA_PAGE, DATA_PAGE_HEADER):
        if page is None or not 0 <= page <= 0x7FFF:
            raise InvalidParameterError(f"page ordinal {page} is not in 0..32767")
        aad += struct.pack("<H", page)
    return aad


def gcm_decrypt(key: bytes, module: bytes, aad: bytes, what: str) -> bytes:
    """Plaintext of a GCM module body (``nonce | ciphertext | tag``, no length prefix)."""
    if len(module) < NONCE_LENGTH + TAG_LENGTH:
        raise CorruptFileError(f"{what}: encrypted module of {len(module)} B is too short")
    try:
        return AESGCM(key).decrypt(module[:NONCE_LENGTH], module[NONCE_LENGTH:], aad)
    except InvalidTag:
        raise DecryptionError(
            f"{what}: AES-GCM authentication failed (a wrong key or AAD prefix, "
            "or the ciphertext was changed)"
        ) from None


def gcm_encrypt(key: bytes, plaintext: bytes, aad: bytes, nonce: bytes | None = None) -> bytes:
    """``nonce | ciphertext | tag`` of ``plaintext``, with a fresh random nonce by default."""
    nonce = os.urandom(NONCE_LENGTH) if nonce is None else nonce
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def ctr_decrypt(key: bytes, module: bytes, what: str) -> bytes:
    """Plaintext of a CTR page body (``nonce | ciphertext``): not authenticated."""
    if len(module) < NONCE_LENGTH:
        raise CorruptFileError(f"{what}: encrypted page of {len(module)} B is too short")
    iv = module[:NONCE_LENGTH] + b"\x00\x00\x00\x01"
    dec = Cipher(algorithms.AES(key), modes.CTR(iv)).decryptor()
    return dec.update(module[NONCE_LENGTH:]) + dec.finalize()


def ctr_encrypt(key: bytes, plaintext: bytes, nonce: bytes | None = None) -> bytes:
    """``nonce | ciphertext`` of a page under AES-CTR (as AES_GCM_CTR_V1 writers do)."""
    nonce = os.urandom(NONCE_LENGTH) if nonce is None else nonce
    enc = Cipher(algorithms.AES(key), modes.CTR(nonce + b"\x00\x00\x00\x01")).encryptor()
    return nonce + enc.update(plaintext) + enc.finalize()


def frame(body: bytes) -> bytes:
    """A module as written to the file: its 4-byte little-endian length, then the body."""
    return struct.pack("<I", len(body)) + body


def unframe(buf: bytes, what: str) -> bytes:
    """The body of a framed module that must fill ``buf`` exactly."""
    if len(buf) < LENGTH_BYTES:
        raise CorruptFileError(f"{what}: encrypted module cut short ({len(buf)} B)")
    (n,) = struct.unpack_from("<I", buf)
    if n != len(buf) - LENGTH_BYTES:
        raise CorruptFileError(
            f"{what}: encrypted module says {n} B but {len(buf) - LENGTH_BYTES} B are there"
        )
    return buf[LENGTH_BYTES:]


def read_framed(fh: BinaryIO, offset: int, limit: int, what: str) -> tuple[bytes, int]:
    """Read the framed module at ``offset`` (which must end by ``limit``): (body, end)."""
    if offset < 0 or offset + LENGTH_BYTES > limit:
        raise CorruptFileError(f"{what}: encrypted module at {offset} runs past the data")
    fh.seek(offset)
    head = fh.read(LENGTH_BYTES)
    if len(head) != LENGTH_BYTES:
        raise CorruptFileError(f"{what}: file ends inside an encrypted module at {offset}")
    (n,) = struct.unpack("<I", head)
    end = offset + LENGTH_BYTES + n
    if n < NONCE_LENGTH or end > limit:
        raise CorruptFileError(
            f"{what}: encrypted module of {n} B at offset {offset} runs past the data"
        )
    body = fh.read(n)
    if len(body) != n:
        raise CorruptFileError(f"{what}: file ends inside an encrypted module at {offset}")
    return body, end


def check_key(key: Any, what: str) -> bytes:
    """``key`` as bytes if it is an AES key (16, 24 or 32 bytes)."""
    if isinstance(key, bytearray | memoryview):
        key = bytes(key)
    if not isinstance(key, bytes) or len(key) not in _AES_KEY_LENGTHS:
        size = f"{len(key)} B" if isinstance(key, bytes) else type(key).__name__
        raise InvalidParameterError(f"{what}: an AES key is 16, 24 or 32 bytes, not {size}")
    return key
