"""ORC wire helpers for tests: ORC's messages read and edited through bloomskip's generated
protobuf classes (:mod:`bloomskip.orc.messages_pb2`), raw protobuf fields for the tests
where the raw bytes are the point, stored-chunk framing, a file split around its tail, and
the seeded mutations of the fuzz tests."""

from __future__ import annotations

import random
import zlib
from typing import TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import read_orc
from bloomskip.orc.compression import NONE, decompress

M = TypeVar("M", bound=Message)

# ----------------------------------------------------------------------- raw protobuf

# Wire types (protobuf "Encoding" guide).
VARINT, I64, LEN, SGROUP, EGROUP, I32 = range(6)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return uvarint(number << 3 | wire)


def vfield(number: int, value: int) -> bytes:
    return tag(number, VARINT) + uvarint(value)


def lfield(number: int, payload: bytes) -> bytes:
    return tag(number, LEN) + uvarint(len(payload)) + payload


def zigzag(n: int) -> int:
    """The wire value of a ``sint64``."""
    return (n << 1) ^ (n >> 63)


# -------------------------------------------------------------------------- messages


def parse(message: type[M], raw: bytes) -> M:
    m = message()
    m.ParseFromString(raw)
    return m


def frame_original(data: bytes, block: int) -> bytes:
    """``data`` framed as stored ("original") chunks - valid under every codec."""
    out = bytearray()
    for i in range(0, len(data), block):
        piece = data[i : i + block]
        out += ((len(piece) << 1) | 1).to_bytes(3, "little") + piece
    return bytes(out)


def frame_deflate(data: bytes, block: int) -> bytes:
    out = bytearray()
    for i in range(0, len(data), block):
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        piece = c.compress(data[i : i + block]) + c.flush()
        out += (len(piece) << 1).to_bytes(3, "little") + piece
    return bytes(out)


def stripe_footer_edit(data: bytes, edit, stripes: range | None = None) -> bytes:
    """An uncompressed file with stripe footers edited in place (``edit`` changes a
    ``StripeFooter`` message); each must keep its length, so nothing moves."""
    f = read_orc(data)
    out = bytearray(data)
    for s in f.stripes if stripes is None else [f.stripes[i] for i in stripes]:
        raw = data[s.footer_offset : s.footer_offset + s.footer_length]
        sf = parse(pb.StripeFooter, raw)
        edit(sf)
        new = sf.SerializeToString()
        assert len(new) == len(raw), "the edit changed the stripe footer's length"
        out[s.footer_offset : s.footer_offset + s.footer_length] = new
    return bytes(out)


class Tail:
    """A file split around its footer, for edits of the PostScript and the Footer
    (``tail.ps`` and ``tail.footer`` are messages; :meth:`build` puts the file together)."""

    def __init__(self, data: bytes) -> None:
        f = read_orc(data, name="seed")
        ps_len = data[-1]
        self.ps = parse(pb.PostScript, data[-1 - ps_len : -1])
        self.footer_start = len(data) - 1 - ps_len - f.postscript.footer_length
        self.body = data[: self.footer_start]
        raw = decompress(data[self.footer_start : -1 - ps_len], f.compression, name="seed")
        self.footer = parse(pb.Footer, raw)
        self.compression = f.compression

    def build(self, *, footer: bytes | None = None, frame: bool = True) -> bytes:
        raw = self.footer.SerializeToString() if footer is None else footer
        if frame and self.compression.kind != NONE:
            raw = frame_original(raw, self.compression.block_size)
        ps = pb.PostScript()
        ps.CopyFrom(self.ps)
        ps.footer_length = len(raw)
        ps_raw = ps.SerializeToString()
        return self.body + raw + ps_raw + bytes([len(ps_raw)])


# ----------------------------------------------------------------------------- fuzz

INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x12)
INSERTS = (
    b"\xff" * 9 + b"\x01",  # a 10-byte varint
    b"\x0a\xff\xff\xff\xff\x0f",  # a 4 GiB length-delimited field
    b"\x0b",  # a group
    b"\x12\x80\x80\x80\x01",  # packed field of 2 MiB
    b"\x01\x00\x00",  # a stored chunk of 0 bytes
)
INTERESTING_INTS = (
    0,
    1,
    2,
    3,
    7,
    8,
    127,
    128,
    255,
    2**16,
    2**23,
    2**31,
    2**32 - 1,
    2**32,
    2**62,
    2**63,
    2**64 - 1,
)
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1
#: A varint's value on the wire -> the field's value, per integer field type.
_FROM_WIRE = {
    FieldDescriptor.TYPE_UINT64: lambda v: v & _U64,
    FieldDescriptor.TYPE_UINT32: lambda v: v & _U32,
    FieldDescriptor.TYPE_INT32: lambda v: (v & _U32) - ((v & (1 << 31)) << 1),
    FieldDescriptor.TYPE_SINT64: lambda v: ((v & _U64) >> 1) ^ -(v & 1),
    FieldDescriptor.TYPE_SINT32: lambda v: ((v & _U32) >> 1) ^ -(v & 1),
    FieldDescriptor.TYPE_BOOL: lambda v: v != 0,
}


def varints(m: Message, out: list) -> list:
    """Every varint value in ``m`` and its sub-messages, as ``(message, field, index)``
    (index None for a singular field)."""
    for fd, value in m.ListFields():
        if fd.message_type is not None:
            for sub in value if fd.is_repeated else [value]:
                varints(sub, out)
        elif fd.type in _FROM_WIRE:
            if fd.is_repeated:
                out.extend((m, fd, j) for j in range(len(value)))
            else:
                out.append((m, fd, None))
    return out


class Seed:
    """A seed file, with what its mutations need: byte ranges worth changing, and its
    PostScript, Footer and stripe footers as messages for structural edits."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        f = read_orc(data)
        ps_len = data[-1]
        self.footer_start = len(data) - 1 - ps_len - f.postscript.footer_length
        self.spans = [(self.footer_start, len(data))]
        self.stripe_footers = []
        for s in f.stripes:
            self.spans.append((s.footer_offset, s.footer_offset + s.footer_length))
            for st in f.streams(s.index):
                if st.kind in (6, 7, 8):
                    self.spans.append((st.offset, st.offset + min(st.length, 64)))
            raw = data[s.footer_offset : s.footer_offset + s.footer_length]
            sf = decompress(raw, f.compression, name="seed")
            self.stripe_footers.append(parse(pb.StripeFooter, sf))
        self.ps = parse(pb.PostScript, data[-1 - ps_len : -1])
        footer_raw = data[self.footer_start : -1 - ps_len]
        self.footer = parse(pb.Footer, decompress(footer_raw, f.compression, name="seed"))
        self.block = f.compression.block_size
        self.compressed = f.compression.kind != NONE
        self.stripes = f.stripes

    def frame(self, raw: bytes) -> bytes:
        return frame_original(raw, self.block) if self.compressed else raw

    def edited(self, rng: random.Random) -> bytes:
        """The file with one integer of its footer, PostScript or a stripe footer changed
        (or a value dropped or repeated); lengths and offsets kept consistent."""
        body = self.data[: self.footer_start]
        footer = pb.Footer()
        footer.CopyFrom(self.footer)
        ps = pb.PostScript()
        ps.CopyFrom(self.ps)
        where = rng.random()
        target: Message | None
        if where < 0.2:
            target = ps
        elif where < 0.6 or not self.stripes:
            target = footer
        else:  # a stripe footer: splice it in, moving the stripes after it
            i = rng.randrange(len(self.stripes))
            sf = pb.StripeFooter()
            sf.CopyFrom(self.stripe_footers[i])
            _edit(sf, rng, len(self.data))
            raw = self.frame(sf.SerializeToString())
            s = self.stripes[i]
            delta = len(raw) - s.footer_length
            body = body[: s.footer_offset] + raw + body[s.footer_offset + s.footer_length :]
            for j, info in enumerate(footer.stripes):
                if j == i:
                    info.footer_length = len(raw)
                elif j > i:
                    info.offset = self.stripes[j].offset + delta
            target = None
        if target is not None:
            _edit(target, rng, len(self.data))
        footer_raw = self.frame(footer.SerializeToString())
        if target is not ps or rng.random() < 0.7:
            ps.footer_length = len(footer_raw)
        ps_raw = ps.SerializeToString()
        return body + footer_raw + ps_raw + bytes([len(ps_raw) & 0xFF])


def _edit(m: Message, rng: random.Random, size: int) -> None:
    slots = varints(m, [])
    if not slots:
        return
    parent, fd, j = rng.choice(slots)
    k = rng.random()
    if k < 0.1:  # drop the value
        if j is None:
            parent.ClearField(fd.name)
        else:
            del getattr(parent, fd.name)[j]
    elif k < 0.2 and j is not None:  # repeat a value of a repeated field
        values = getattr(parent, fd.name)
        values.append(values[j])
    else:  # the value a varint on the wire would carry, as the field reads it
        wire = rng.choice((*INTERESTING_INTS, size, size - 3, rng.randrange(size + 8)))
        v = _FROM_WIRE[fd.type](wire)
        if j is None:
            setattr(parent, fd.name, v)
        else:
            getattr(parent, fd.name)[j] = v


def mutate(seed: Seed, rng: random.Random) -> bytes:
    if rng.random() < 0.3:
        return seed.edited(rng)
    buf = bytearray(seed.data)
    for _ in range(rng.randint(1, 3)):
        lo, hi = rng.choice(seed.spans)
        pos = rng.randrange(lo, max(lo + 1, min(hi, len(buf))))
        pos = min(pos, len(buf) - 1)
        op = rng.random()
        if op < 0.4:
            buf[pos] ^= 1 << rng.randrange(8)
        elif op < 0.65:
            buf[pos] = rng.choice(INTERESTING)
        elif op < 0.78:
            buf[pos:pos] = rng.choice(INSERTS)
        elif op < 0.9:
            del buf[pos : pos + rng.randint(1, 6)]
        else:
            buf[pos] = rng.randrange(256)
    if rng.random() < 0.04:
        del buf[rng.randrange(len(buf)) :]
    return bytes(buf)
