"""Numba set-up shared by every kernel module, and the few LLVM intrinsics they need.

Importing this module before any kernel compiles does three things:

* turns on LLVM's SLP vectorizer (numba ships with it off), which lets the
  eight-word mask of an SBBF block be computed and OR-ed with vector instructions;
* provides ``load_u64`` / ``load_u32``: little-endian loads at any byte offset of a
  ``uint8`` array (one unaligned load, not eight byte loads);
* provides ``prefetch`` / ``prefetch_read``: hints that a block of the filter will be
  written, or input bytes read, soon.

Kernels are compiled with ``cache=True``; numba stores them next to the sources or,
when that folder is read-only, in ``NUMBA_CACHE_DIR`` / the user cache folder.
"""

from __future__ import annotations

import sys
from typing import Any

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

if sys.byteorder != "little":  # pragma: no cover - no big-endian CI machine
    raise ImportError("bloomskip's kernels assume a little-endian host")

numba.config.SLP_VECTORIZE = 1

#: Options shared by every kernel: compiled once, cached on disk, GIL released.
KERNEL = {"cache": True, "nogil": True, "error_model": "numpy", "boundscheck": False}


def _element_pointer(context, builder, arrty, arr, idx):
    ary = context.make_array(arrty)(context, builder, arr)
    return cgutils.get_item_pointer(context, builder, arrty, ary, [idx], wraparound=False)


def _little_endian_load(name: str, result: types.Integer) -> Any:
    """The intrinsic ``name(data, idx)``: the ``result``-wide little-endian integer at byte
    ``idx`` of ``data`` (a uint8 array), read with one unaligned load."""

    def load(typingctx, data, idx):
        if not (isinstance(data, types.Array) and data.dtype == types.uint8):
            return None

        def codegen(context, builder, sig, args):
            ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
            wide = builder.bitcast(ptr, ir.IntType(result.bitwidth).as_pointer())
            return builder.load(wide, align=1)

        return result(data, idx), codegen

    load.__name__ = load.__qualname__ = name
    return intrinsic(load)


#: ``load_u64(data, idx)``: eight bytes of ``data`` (a uint8 array) from ``idx`` as a
#: little-endian uint64.
load_u64 = _little_endian_load("load_u64", types.uint64)
#: ``load_u32(data, idx)``: four bytes of ``data`` (a uint8 array) from ``idx`` as a
#: little-endian uint32.
load_u32 = _little_endian_load("load_u32", types.uint32)


def _prefetch_codegen(rw):
    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # (address, rw: 0 read / 1 write, locality 3 = keep in all levels, data cache)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(rw), i32(3), i32(1)])
        return context.get_dummy_value()

    return codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to bring ``arr[idx]`` into cache for writing (no effect on results)."""
    if not isinstance(arr, types.Array):
        return None
    return types.void(arr, idx), _prefetch_codegen(1)


@intrinsic
def prefetch_read(typingctx, arr, idx):
    """Hint the CPU to bring ``arr[idx]`` into cache for reading (no effect on results).

    ``idx`` must lie inside ``arr``. LLVM does not vectorize a loop that prefetches, which
    the row-parallel hash relies on to keep its strided loads scalar (see
    :func:`bloomskip.hashing.kernels.xxh64_rows`).
    """
    if not isinstance(arr, types.Array):
        return None
    return types.void(arr, idx), _prefetch_codegen(0)
