"""ORC wire helpers for tests: protobuf fields written and edited by hand, stored-chunk
framing, a file split around its tail, and the seeded mutations of the fuzz tests."""

from __future__ import annotations

import random
import zlib

from bloomskip.orc import proto, read_orc
from bloomskip.orc.compression import NONE, decompress


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
    return tag(number, 0) + uvarint(value)


def lfield(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + uvarint(len(payload)) + payload


def fields(buf: bytes) -> list[list]:
    """A message as [number, wire, value] (bytes for length-delimited, else int)."""
    return [
        [n, w, buf[a:b] if w == proto.LEN else a]
        for n, w, a, b in proto.iter_fields(buf, 0, len(buf), "test")
    ]


def encode(fs: list[list]) -> bytes:
    out = bytearray()
    for n, w, v in fs:
        out += tag(n, w)
        if w == proto.VARINT:
            out += uvarint(v)
        elif w == proto.LEN:
            out += uvarint(len(v)) + v
        elif w == proto.I64:
            out += v.to_bytes(8, "little")
        else:
            out += v.to_bytes(4, "little")
    return bytes(out)


def set_field(fs: list[list], number: int, value, wire: int = proto.VARINT) -> None:
    """Replace every occurrence of field ``number`` by one (appended if absent)."""
    kept = [f for f in fs if f[0] != number]
    fs[:] = [*kept, [number, wire, value]]


def occurrences(fs: list[list], number: int) -> list[list]:
    return [f for f in fs if f[0] == number]


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


class Tail:
    """A file split around its footer, for edits of the PostScript and the Footer."""

    def __init__(self, data: bytes) -> None:
        f = read_orc(data, name="seed")
        ps_len = data[-1]
        self.ps = fields(data[-1 - ps_len : -1])
        self.footer_start = len(data) - 1 - ps_len - f.postscript.footer_length
        self.body = data[: self.footer_start]
        self.footer = fields(
            decompress(data[self.footer_start : -1 - ps_len], f.compression, name="seed")
        )
        self.compression = f.compression

    def build(self, *, footer: bytes | None = None, frame: bool = True) -> bytes:
        raw = encode(self.footer) if footer is None else footer
        if frame and self.compression.kind != NONE:
            raw = frame_original(raw, self.compression.block_size)
        ps = list(self.ps)
        set_field(ps, 1, len(raw))
        ps_raw = encode(ps)
        return self.body + raw + ps_raw + bytes([len(ps_raw)])

    def stripe(self, i: int) -> list[list]:
        return fields(occurrences(self.footer, 3)[i][2])

    def set_stripe(self, i: int, stripe: list[list]) -> None:
        n = 0
        for f in self.footer:
            if f[0] == 3:
                if n == i:
                    f[2] = encode(stripe)
                n += 1


INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x12)
INSERTS = (
    b"\xff" * 9 + b"\x01",  # a 10-byte varint
    b"\x0a\xff\xff\xff\xff\x0f",  # a 4 GiB length-delimited field
    b"\x0b",  # a group
    b"\x12\x80\x80\x80\x01",  # packed field of 2 MiB
    b"\x01\x00\x00",  # a stored chunk of 0 bytes
)


#: Which length-delimited fields are messages, per message (for structural edits).
STATS_SCHEMA = {2: {}, 3: {}, 4: {}, 5: {}, 6: {}, 7: {}, 8: {}, 9: {}, 12: {}}
FOOTER_SCHEMA = {3: {}, 4: {7: {}}, 7: STATS_SCHEMA}
STRIPE_FOOTER_SCHEMA = {1: {}, 2: {}}
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


def tree(buf: bytes, schema: dict) -> list[list]:
    """A message as [number, wire, value], message-valued fields parsed recursively."""
    out = fields(buf)
    for f in out:
        if f[1] == proto.LEN and f[0] in schema:
            f[2] = tree(f[2], schema[f[0]])
    return out


def encode_tree(fs: list[list]) -> bytes:
    return encode([[n, w, encode_tree(v) if isinstance(v, list) else v] for n, w, v in fs])


def varints(fs: list[list], out: list) -> list:
    for f in fs:
        if f[1] == proto.VARINT:
            out.append((fs, f))
        elif isinstance(f[2], list):
            varints(f[2], out)
    return out


class Seed:
    """A seed file, with what its mutations need: byte ranges worth changing, and its
    PostScript, Footer and stripe footers as trees for structural edits."""

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
            self.stripe_footers.append(decompress(raw, f.compression, name="seed"))
        self.ps = fields(data[-1 - ps_len : -1])
        footer_raw = data[self.footer_start : -1 - ps_len]
        self.footer = decompress(footer_raw, f.compression, name="seed")
        self.block = f.compression.block_size
        self.compressed = f.compression.kind != NONE
        self.stripes = f.stripes

    def frame(self, raw: bytes) -> bytes:
        return frame_original(raw, self.block) if self.compressed else raw

    def edited(self, rng: random.Random) -> bytes:
        """The file with one integer of its footer, PostScript or a stripe footer changed
        (or a field dropped or repeated); lengths and offsets kept consistent."""
        body = self.data[: self.footer_start]
        footer = tree(self.footer, FOOTER_SCHEMA)
        ps = [list(f) for f in self.ps]
        where = rng.random()
        if where < 0.2:
            target = ps
        elif where < 0.6 or not self.stripes:
            target = footer
        else:  # a stripe footer: splice it in, moving the stripes after it
            i = rng.randrange(len(self.stripes))
            sf = tree(self.stripe_footers[i], STRIPE_FOOTER_SCHEMA)
            _edit(sf, rng, len(self.data))
            raw = self.frame(encode_tree(sf))
            s = self.stripes[i]
            delta = len(raw) - s.footer_length
            body = body[: s.footer_offset] + raw + body[s.footer_offset + s.footer_length :]
            infos = [f for f in footer if f[0] == 3]
            for j, info in enumerate(infos):
                if j == i:
                    set_field(info[2], 4, len(raw))
                elif j > i:
                    set_field(info[2], 1, self.stripes[j].offset + delta)
            target = None
        if target is not None:
            _edit(target, rng, len(self.data))
        footer_raw = self.frame(encode_tree(footer))
        if target is not ps or rng.random() < 0.7:
            set_field(ps, 1, len(footer_raw))
        ps_raw = encode(ps)
        return body + footer_raw + ps_raw + bytes([len(ps_raw) & 0xFF])


def _edit(fs: list[list], rng: random.Random, size: int) -> None:
    slots = varints(fs, [])
    if not slots:
        return
    parent, f = rng.choice(slots)
    k = rng.random()
    if k < 0.1:
        parent.remove(f)
    elif k < 0.2:
        parent.append(list(f))
    else:
        f[2] = rng.choice((*INTERESTING_INTS, size, size - 3, rng.randrange(size + 8)))


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
