"""Compiled kernels of ORC's Bloom filter: its two base hashes and its bit positions.

ORC (``org.apache.orc.util.BloomFilter`` / ``BloomFilterUtf8``, C++ ``BloomFilterImpl``)
is a classic Bloom filter of ``m`` bits (``m`` a multiple of 64, stored as 64-bit
words) probed ``k`` times per value. Each value is reduced to one signed 64-bit
*base hash*:

* byte strings (STRING, VARCHAR, CHAR, BINARY, DECIMAL as text): ORC's own
  ``Murmur3.hash64`` with seed 104729 - a *single-lane* 64-bit MurmurHash3 over
  8-byte little-endian blocks, not the first half of MurmurHash3_x64_128 and not
  ``mmh3.hash64``::

      h = 104729
      for each 8-byte block b:  b *= C1; b = rotl(b, 31); b *= C2
                                h ^= b; h = rotl(h, 27) * 5 + 0x52dce729
      tail (1-7 bytes, little-endian, zero-extended): t *= C1; t = rotl(t, 31); t *= C2; h ^= t
      h ^= length; h = fmix64(h)

  The block mix, tail load and ``fmix64`` are MurmurHash3's, shared with
  :mod:`bloomskip.hashing.kernels`.

* numbers (every integer width, dates as days, timestamps as milliseconds, floats
  and doubles by their bits, which :mod:`.feeds` makes canonical for NaNs as
  ``Double.doubleToLongBits`` does): Thomas Wang's 64-bit integer mix, with Java's
  *arithmetic* (sign-extending) ``>>``. A logical shift here was the C++ bug ORC-1024.

The ``k`` positions come from the base hash by Kirsch-Mitzenmacher double hashing,
exactly as Java computes them in 32-bit ``int`` arithmetic::

    hash1 = (int) h              low 32 bits, signed
    hash2 = (int) (h >>> 32)     high 32 bits, signed
    for i in 1..k:
        c = hash1 + i * hash2    wraps at 32 bits
        if c < 0: c = ~c         flip every bit (not abs)
        set bit c % m            word c >> 6, bit c & 63

Here the 32-bit arithmetic is done on unsigned values: ``c`` wraps mod 2**32 and
"negative, then flip" is ``c ^ 0xFFFFFFFF`` when bit 31 is set - the same bits.

Every kernel takes the filter as a ``uint64`` array of words (``m = 64 * len``) and
``k``; values come as numpy arrays or the buffers of an Arrow array (``offsets`` of
int32/int64 plus ``data`` of uint8). Nothing here validates: the caller
(:class:`bloomskip.orc.OrcBloomFilter`) checks ``k`` and the sizes first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip._numba import KERNEL, load_u64
from bloomskip.hashing.kernels import fmix64, load_tail, murmur3_k1, rotl64
from bloomskip.orc.types import VAR_PAD, VAR_RAW, VAR_TRUNCATE  # noqa: F401 - kernels use them

#: The seed ORC passes to ``Murmur3.hash64`` (``Murmur3.DEFAULT_SEED``).
SEED = 104729
#: ``Murmur3.NULL_HASHCODE``: what Java's ``add(null)`` hashes (writers never add nulls).
NULL_HASHCODE = 2862933555777941757
#: ``Double.doubleToLongBits(NaN)``: Java hashes every NaN with these bits.
CANONICAL_NAN_BITS = 0x7FF8000000000000

#: How string values are cut or padded before hashing (ORC's writers, per column kind).

_U64 = np.uint64
_N1 = np.uint64(0x52DCE729)
_LOW32 = np.uint64(0xFFFFFFFF)
_SPACE = np.uint8(0x20)
#: Room for the canonical text of one decimal256 at scale <= 76: at most 80 bytes
#: (a sign, 78 digits and a point, or "-0." and 76 digits).
DECIMAL_MAX_CHARS = 96


# --- base hashes ---------------------------------------------------------------------


@njit(inline="always")
def murmur3_hash64(data, start, length):
    """ORC's ``Murmur3.hash64(data, start, length)`` (seed 104729), as a uint64."""
    h = _U64(SEED)
    p = start
    for _ in range(length >> 3):
        h ^= murmur3_k1(load_u64(data, p))
        h = rotl64(h, 27) * _U64(5) + _N1
        p += 8
    tail = length & 7
    if tail:
        h ^= murmur3_k1(load_tail(data, p, tail))
    h ^= _U64(length)
    return fmix64(h)


@njit(inline="always")
def long_hash(key):
    """ORC's ``BloomFilter.getLongHash`` (Thomas Wang), on int64 with arithmetic shifts.

    numba's int64 ``+`` and ``<<`` wrap mod 2**64 and its ``>>`` sign-extends, as
    Java's ``long`` operators do.
    """
    key = np.int64(key)
    key = (~key) + (key << np.int64(21))
    key = key ^ (key >> np.int64(24))
    key = (key + (key << np.int64(3))) + (key << np.int64(8))
    key = key ^ (key >> np.int64(14))
    key = (key + (key << np.int64(2))) + (key << np.int64(4))
    key = key ^ (key >> np.int64(28))
    key = key + (key << np.int64(31))
    return key


# --- positions -----------------------------------------------------------------------


@njit(inline="always")
def _first_and_step(h):
    u = _U64(h)
    return u & _LOW32, u >> _U64(32)


@njit(inline="always")
def _position(c, nbits):
    # c: the 32-bit combined hash as an unsigned value. Negative as an int -> ~c.
    c ^= (_U64(0) - (c >> _U64(31))) & _LOW32
    return np.uint32(c) % nbits


@njit(inline="always")
def _next_probe(c, step, nbits):
    """The probe after the one of combined hash ``c``: its combined hash, and the word
    and the bit mask of its position."""
    c = (c + step) & _LOW32
    pos = _position(c, nbits)
    return c, pos >> np.uint32(6), _U64(1) << _U64(pos & np.uint32(63))


@njit(inline="always")
def insert_hash(words, nbits, k, h):
    """Set the ``k`` bits of base hash ``h`` (int64 or uint64) in ``words``."""
    c, step = _first_and_step(h)
    for _ in range(k):
        c, word, bit = _next_probe(c, step, nbits)
        words[word] |= bit


@njit(inline="always")
def contains_hash(words, nbits, k, h):
    """Are all ``k`` bits of base hash ``h`` set?"""
    c, step = _first_and_step(h)
    for _ in range(k):
        c, word, bit = _next_probe(c, step, nbits)
        if words[word] & bit == _U64(0):
            return False
    return True


@njit(**KERNEL)
def probe_positions(hashes, k, nbits, out):
    """``out[i, j]`` = bit position of probe ``j + 1`` of base hash ``hashes[i]``."""
    nb = np.uint32(nbits)
    for i in range(hashes.shape[0]):
        c, step = _first_and_step(hashes[i])
        for j in range(k):
            c = (c + step) & _LOW32
            out[i, j] = _position(c, nb)


# --- base hashes of arrays -----------------------------------------------------------


@njit(**KERNEL)
def long_hashes(values, out):
    """``out[i]`` = ``getLongHash(values[i])`` (int64 in, int64 out)."""
    for i in range(values.shape[0]):
        out[i] = long_hash(values[i])


@njit(inline="always")
def _truncated_length(data, start, length, max_chars):
    """``Utf8Utils.truncateBytesTo``: bytes of the first ``max_chars`` characters."""
    if length <= max_chars:
        return length
    chars = 0
    for i in range(length):
        if (data[start + i] & 0xC0) != 0x80:
            chars += 1
        if chars > max_chars:
            return i
    return length


@njit(inline="always")
def _char_length(data, start, length):
    """``Utf8Utils.charLength``: characters = bytes that are not UTF-8 continuations."""
    chars = 0
    for i in range(length):
        if (data[start + i] & 0xC0) != 0x80:
            chars += 1
    return chars


@njit(inline="always")
def var_hash(data, start, length, mode, max_chars, scratch):
    """Base hash of one string after ORC's VARCHAR truncation or CHAR padding.

    ``scratch`` is a uint8 array of at least ``length + max_chars`` bytes (CHAR only).
    """
    if mode == VAR_TRUNCATE:
        return murmur3_hash64(data, start, _truncated_length(data, start, length, max_chars))
    if mode == VAR_PAD:
        chars = _char_length(data, start, length)
        if chars >= max_chars:
            n = _truncated_length(data, start, length, max_chars)
            return murmur3_hash64(data, start, n)
        for i in range(length):
            scratch[i] = data[start + i]
        total = length + (max_chars - chars)
        for i in range(length, total):
            scratch[i] = _SPACE
        return murmur3_hash64(scratch, 0, total)
    return murmur3_hash64(data, start, length)


@njit(inline="always")
def _var_scratch(offsets, mode, max_chars):
    if mode != VAR_PAD:
        return np.empty(0, np.uint8)
    longest = 0
    for i in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[i + 1] - offsets[i])
    return np.empty(longest + max_chars, np.uint8)


@njit(**KERNEL)
def var_hashes(offsets, data, mode, max_chars, out):
    """``out[i]`` = base hash of string ``i`` (Arrow layout), cut or padded per ``mode``."""
    scratch = _var_scratch(offsets, mode, max_chars)
    for i in range(out.shape[0]):
        a = offsets[i]
        out[i] = var_hash(data, a, offsets[i + 1] - a, mode, max_chars, scratch)


# --- decimals as canonical strings ---------------------------------------------------


@njit(inline="always")
def format_decimal(words, start, nwords, scale, buf, digits, limbs):
    """Write the canonical ORC text of one decimal into ``buf``; return its length.

    The unscaled value is ``words[start : start + nwords]``: little-endian uint64 words
    of a two's complement integer (2 for decimal128, 4 for decimal256); ``scale`` is
    0..76. The text is what ORC Java's ``HiveDecimalWritable.toString`` and ORC C++'s
    ``Decimal::toString(true)`` give: plain notation, no exponent, trailing fractional
    zeros dropped, and the point dropped when no fraction remains ("1.5", "-0.05",
    "100", "0"). ``digits`` (>= 80 entries) and ``limbs`` (>= 2 * nwords) are scratch.
    """
    negative = (words[start + nwords - 1] >> _U64(63)) != _U64(0)
    nlimbs = 2 * nwords
    carry = _U64(1)
    for j in range(nwords):  # least significant word first; negate if negative
        w = words[start + j]
        if negative:
            w = ~w + carry
            carry = _U64(1) if (carry == _U64(1) and w == _U64(0)) else _U64(0)
        limbs[nlimbs - 1 - 2 * j] = w & _LOW32  # 32-bit limbs, most significant first
        limbs[nlimbs - 2 - 2 * j] = w >> _U64(32)
    # Peel nine digits at a time (remainder < 1e9 < 2**30, so r << 32 fits in 64 bits);
    # `digits` receives the magnitude's digits, least significant first.
    nd = 0
    billion = _U64(1_000_000_000)
    while True:
        r = _U64(0)
        rest = _U64(0)
        for j in range(nlimbs):
            acc = (r << _U64(32)) | limbs[j]
            q = acc // billion
            r = acc - q * billion
            limbs[j] = q
            rest |= q
        done = rest == _U64(0)
        for _ in range(9):
            digits[nd] = np.uint8(r % _U64(10))
            r //= _U64(10)
            nd += 1
            if done and r == _U64(0):
                break
        if done:
            break
    # Trailing fractional zeros go; what is left of the fraction is `frac` digits.
    frac = scale
    low = 0
    while frac > 0 and low < nd and digits[low] == 0:
        low += 1
        frac -= 1
    if low >= nd or (nd == 1 and digits[0] == 0):  # the value is zero
        buf[0] = np.uint8(48)
        return 1
    n = 0
    if negative:
        buf[0] = np.uint8(45)  # "-"
        n = 1
    int_digits = nd - scale
    if int_digits <= 0:
        buf[n] = np.uint8(48)
        n += 1
    else:
        for i in range(nd - 1, nd - 1 - int_digits, -1):
            buf[n] = np.uint8(48) + digits[i]
            n += 1
    if frac > 0:
        buf[n] = np.uint8(46)  # "."
        n += 1
        for _ in range(-int_digits if int_digits < 0 else 0):
            buf[n] = np.uint8(48)
            n += 1
        for i in range(min(nd, scale) - 1, low - 1, -1):
            buf[n] = np.uint8(48) + digits[i]
            n += 1
    return n


@njit(**KERNEL)
def decimal_hashes(words, nwords, scale, out):
    """``out[i]`` = Murmur3 ``hash64`` of the canonical text of decimal ``i``.

    ``words`` is the decimal128 (``nwords`` = 2) or decimal256 (4) buffer as uint64.
    """
    buf = np.empty(DECIMAL_MAX_CHARS, np.uint8)
    digits = np.empty(DECIMAL_MAX_CHARS, np.uint8)
    limbs = np.empty(8, np.uint64)
    for i in range(out.shape[0]):
        n = format_decimal(words, nwords * i, nwords, scale, buf, digits, limbs)
        out[i] = murmur3_hash64(buf, 0, n)


@njit(**KERNEL)
def decimal_strings(words, nwords, scale, offsets, data):
    """The canonical texts of decimals into Arrow buffers; returns the bytes written.

    ``offsets`` has ``n + 1`` int64 entries, ``data`` at least ``n * DECIMAL_MAX_CHARS``
    bytes.
    """
    buf = np.empty(DECIMAL_MAX_CHARS, np.uint8)
    digits = np.empty(DECIMAL_MAX_CHARS, np.uint8)
    limbs = np.empty(8, np.uint64)
    pos = 0
    offsets[0] = 0
    for i in range(offsets.shape[0] - 1):
        n = format_decimal(words, nwords * i, nwords, scale, buf, digits, limbs)
        for j in range(n):
            data[pos + j] = buf[j]
        pos += n
        offsets[i + 1] = pos
    return pos


# --- filter kernels: insert / check ---------------------------------------------------


@njit(**KERNEL)
def insert_hashes(words, k, hashes):
    """Set the bits of every base hash (int64 or uint64)."""
    nbits = np.uint32(words.shape[0] * 64)
    for i in range(hashes.shape[0]):
        insert_hash(words, nbits, k, hashes[i])


@njit(**KERNEL)
def check_hashes(words, k, hashes, out):
    nbits = np.uint32(words.shape[0] * 64)
    for i in range(hashes.shape[0]):
        out[i] = contains_hash(words, nbits, k, hashes[i])


@njit(**KERNEL)
def insert_longs(words, k, values):
    """``addLong`` of every int64 value."""
    nbits = np.uint32(words.shape[0] * 64)
    for i in range(values.shape[0]):
        insert_hash(words, nbits, k, long_hash(values[i]))


@njit(**KERNEL)
def check_longs(words, k, values, out):
    nbits = np.uint32(words.shape[0] * 64)
    for i in range(values.shape[0]):
        out[i] = contains_hash(words, nbits, k, long_hash(values[i]))


@njit(**KERNEL)
def insert_var(words, k, offsets, data, mode, max_chars):
    """``addBytes`` of every string of an Arrow binary layout, cut or padded per ``mode``."""
    nbits = np.uint32(words.shape[0] * 64)
    scratch = _var_scratch(offsets, mode, max_chars)
    for i in range(offsets.shape[0] - 1):
        a = offsets[i]
        h = var_hash(data, a, offsets[i + 1] - a, mode, max_chars, scratch)
        insert_hash(words, nbits, k, h)


@njit(**KERNEL)
def check_var(words, k, offsets, data, mode, max_chars, out):
    nbits = np.uint32(words.shape[0] * 64)
    scratch = _var_scratch(offsets, mode, max_chars)
    for i in range(offsets.shape[0] - 1):
        a = offsets[i]
        h = var_hash(data, a, offsets[i + 1] - a, mode, max_chars, scratch)
        out[i] = contains_hash(words, nbits, k, h)
