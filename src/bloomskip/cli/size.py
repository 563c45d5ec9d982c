"""``bloomskip size``: how big a filter must be for NDV distinct values at a target FPP.

Sizes under both policies of :mod:`bloomskip.sbbf.sizing` ("parquet": the classic formula
of parquet-java, arrow-rs, Arrow C++ and DuckDB; "putze": the exact SBBF FPP, as Lance),
in bytes and 32-byte blocks (as arrow-rs's sizing table gives them), with the
false-positive rate each size really gives (Putze's formula).
"""

from __future__ import annotations

import argparse

from bloomskip.cli import args as types
from bloomskip.cli.common import command, emit, emit_json
from bloomskip.cli.options import add_fpp, add_json

HELP = "how big a filter must be for N distinct values at a target FPP"

DESCRIPTION = """\
How many bytes a Split Block Bloom Filter needs for NDV distinct values at a target
false-positive probability, under both sizing policies:

  parquet  the classic formula of parquet-java, arrow-rs, Arrow C++ and DuckDB; it
           treats the filter as a classic Bloom filter and can under-size it
  putze    the exact FPP of a split block filter (Putze et al.), as Lance sizes it;
           always meets the target

and the false-positive rate each size really gives. Sizes are powers of two from
32 B to 128 MiB, shown with their number of 32-byte blocks."""

EPILOG = """\
examples:
  bloomskip size --ndv 1e6                     1M values at the default FPP 0.01
  bloomskip size --ndv 20_000_000 --fpp 0.001
  bloomskip size --ndv 8192 --fpp 0.00057 --json   one zone of the zone index"""


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "size", run, HELP, DESCRIPTION, EPILOG)
    p.add_argument(
        "--ndv", required=True, metavar="N", type=types.NDV,
        help="distinct values, e.g. 1e6 or 20_000_000",
    )  # fmt: skip
    add_fpp(p, 0.01)
    add_json(p)


def run(args: argparse.Namespace) -> int:
    from bloomskip.sbbf.sizing import BLOCK_BYTES, POLICIES, num_bytes_for, putze_fpp

    ndv, fpp = args.ndv, args.fpp
    rows = []
    for policy in POLICIES:
        nb = num_bytes_for(ndv, fpp, policy)
        rows.append(
            {
                "policy": policy,
                "bytes": nb,
                "blocks": nb // BLOCK_BYTES,
                "expected_fpp": putze_fpp(ndv, nb),
            }
        )
    if args.json:
        emit_json({"ndv": ndv, "target_fpp": fpp, "sizes": rows})
        return 0
    lines = [f"ndv {ndv:,}, target fpp {fpp}"]
    for r in rows:
        lines.append(
            f"  {r['policy']:8} {r['bytes']:>12,} B {r['blocks']:>10,} blocks   "
            f"expected fpp {r['expected_fpp']:.3g}"
        )
    emit("\n".join(lines))
    return 0
