"""The ``bloomskip`` command line.

bloomskip demo                       point lookups on a 20M-row lake, three ways (Spark)
bloomskip size --ndv 1e6 --fpp 0.01  filter size under both sizing policies
bloomskip hash --type int32 42       the xxHash64 a Parquet filter stores for a value
bloomskip inspect FILE               the bloom filters of a Parquet/ORC file or Lance dataset
bloomskip probe FILE -c COL VALUE..  ask each row group's bloom filter for values
bloomskip prune FILE --where SQL     the row groups that may hold matching rows
bloomskip add-bloom SRC [DST] -c C   add bloom filters without rewriting the data
bloomskip index build|refresh|query|status|vacuum   a zone index over a whole lake

inspect, probe, prune and add-bloom read encrypted Parquet files with --footer-key,
--column-key, --master-key, --aad-prefix or --keys FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

import pyarrow as pa

from bloomskip.errors import BloomskipError, InvalidParameterError, MissingDependencyError
from bloomskip.hashing import hash_values
from bloomskip.hashing.arrow import parquet_spec
from bloomskip.sbbf.sizing import POLICIES, num_bytes_for, putze_fpp

_TYPES = {
    "bool": pa.bool_(),
    "int8": pa.int8(),
    "int16": pa.int16(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "uint8": pa.uint8(),
    "uint16": pa.uint16(),
    "uint32": pa.uint32(),
    "uint64": pa.uint64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "date": pa.date32(),
}


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.sbbf:
        from bloomskip.demo.sbbf import run

        run(n=args.n, fpp=args.fpp)
        return 0
    from bloomskip.demo import LakeSpec, run_demo

    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        raise MissingDependencyError(
            "the demo runs Spark, which needs Java 17+ (no java on PATH, no JAVA_HOME); "
            "'bloomskip demo --sbbf' shows the filter alone without Spark"
        )
    spec = LakeSpec(files=args.files, rows=args.rows, row_group_rows=args.row_group)
    result = run_demo(args.dir, spec=spec, fresh=args.fresh, repeat=args.repeat)
    print(json.dumps(result.to_json(), indent=2) if args.json else result.table())
    return 0


_DEMO_HELP = """\
Look rows up in a data lake three ways with Spark, check that they agree, and time them.

1. Generate a lake: 200 Parquet files, 20M rows (uuid, user_id, ts, country, amount,
   quantity), no bloom filters; about 1 GB, generated in 10-15 s with numpy.
   Kept in --dir and re-used by the next run with the same sizes.
2. Start a local Spark session on all cores (needs Java 17+ and pyspark:
   pip install 'bloomskip[spark]').
3. Build bloomskip's zone index on uuid and user_id with Spark (about 250 MB: a filter
   per 8,192-row zone and per file, for a false-positive rate of 0.00057).
4. Write a copy of the lake with Spark's own Parquet bloom filters on both columns,
   row groups about as large as the lake's (about a minute; kept and re-used).
5. Run the lookups - uuid present, uuid absent, user_id present, uuid IN (10 values) -
   each three ways:
     spark scan    spark.read.parquet(lake).where(q): reads every file
     native bloom  the same over the copy: Spark skips row groups whose bloom filter
                   rules the value out, but opens every file to ask
     bloomskip     bloomskip.spark.plan_read(spark, lake, index, q).df: the index
                   names the files that may match; Spark reads only those
   All three must return the same rows (else the demo fails). Then print seconds,
   files and bytes read (Spark's scan metrics) and rows per lookup and way.

Progress goes to stderr, the table (or --json) to stdout. About 2.5 minutes the first
time on 2 cores, about a minute less when the lake and copy are re-used. Disk: about
2.4 GB in --dir."""
_DEMO_EPILOG = """\
examples:
  bloomskip demo                               the full 20M-row lake in ./demo-lake
  bloomskip demo --files 50 --rows 2e6         a 2M-row lake, in about a minute
  bloomskip demo --dir /tmp/lake --fresh --json > demo.json
  bloomskip demo --sbbf --n 1e6                no Spark: build and probe one filter"""


def _count(text: str) -> int:
    """An integer count, also written as 2e6 or 20_000_000."""
    try:
        value = float(text.replace("_", "")) if "e" in text.lower() else int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count: {text!r}") from None
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(value)


def _cmd_size(args: argparse.Namespace) -> int:
    ndv = int(float(args.ndv))
    rows = []
    for policy in POLICIES:
        nb = num_bytes_for(ndv, args.fpp, policy)
        rows.append({"policy": policy, "bytes": nb, "expected_fpp": putze_fpp(ndv, nb)})
    if args.json:
        print(json.dumps({"ndv": ndv, "target_fpp": args.fpp, "sizes": rows}))
    else:
        print(f"ndv {ndv:,}, target fpp {args.fpp}")
        for r in rows:
            print(f"  {r['policy']:8} {r['bytes']:>12,} B   expected fpp {r['expected_fpp']:.3g}")
    return 0


def _cmd_hash(args: argparse.Namespace) -> int:
    t = _TYPES[args.type]
    values: list[object] = []
    for v in args.values:
        if pa.types.is_integer(t):
            values.append(int(v))
        elif pa.types.is_floating(t):
            values.append(float(v))
        elif pa.types.is_boolean(t):
            values.append(v.lower() in ("1", "true", "t", "yes"))
        elif pa.types.is_date(t):
            import datetime as dt

            values.append(dt.date.fromisoformat(v))
        elif pa.types.is_binary(t):
            values.append(bytes.fromhex(v))
        else:
            values.append(v)
    hashes = hash_values(values, type=t, encoding=args.encoding)
    physical = parquet_spec(t).physical_type.value if args.encoding == "parquet" else "arrow"
    for v, h in zip(args.values, hashes, strict=True):
        print(f"{v}\t{physical}\t{int(h)}\t0x{int(h):016x}")
    return 0


_KEYS_HELP = """encrypted Parquet files (modular encryption):
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


def _hex_key(text: str, what: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise InvalidParameterError(f"{what}: {text!r} is not hexadecimal") from None


def _decryption(args: argparse.Namespace):
    """A Decryption from the key options, or None when none is given."""
    import base64
    import binascii

    doc: dict = {}
    if getattr(args, "keys", None):
        with open(args.keys, encoding="utf-8") as fh:
            try:
                doc = json.load(fh)
            except ValueError as e:
                raise InvalidParameterError(f"{args.keys}: not JSON ({e})") from None
        if not isinstance(doc, dict):
            raise InvalidParameterError(f"{args.keys}: not a JSON object")
    footer = args.footer_key or doc.get("footer_key")
    columns = {str(k): str(v) for k, v in (doc.get("column_keys") or {}).items()}
    for item in args.column_key or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidParameterError(f"--column-key {item!r}: use COLUMN=HEX")
        columns[name] = value
    masters = {str(k): str(v) for k, v in (doc.get("master_keys") or {}).items()}
    for item in args.master_key or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidParameterError(f"--master-key {item!r}: use ID=BASE64")
        masters[name] = value
    aad = args.aad_prefix if args.aad_prefix is not None else doc.get("aad_prefix")
    if not (footer or columns or masters or aad is not None):
        return None
    from bloomskip.parquet.crypto import Decryption
    from bloomskip.parquet.keytools import InMemoryKms, KeyToolsRetriever

    decoded: dict[str, bytes] = {}
    for name, value in masters.items():
        try:
            decoded[name] = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidParameterError(f"master key {name}: not base64") from None
    return Decryption(
        footer_key=_hex_key(footer, "footer key") if footer else None,
        column_keys={k: _hex_key(v, f"key of column {k}") for k, v in columns.items()},
        key_retriever=KeyToolsRetriever(InMemoryKms(decoded)) if decoded else None,
        aad_prefix=aad.encode("utf-8") if isinstance(aad, str) else None,
    )


def _key_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("keys of encrypted files (see above)")
    g.add_argument("--footer-key", metavar="HEX")
    g.add_argument("--column-key", action="append", metavar="COL=HEX")
    g.add_argument("--master-key", action="append", metavar="ID=BASE64")
    g.add_argument("--aad-prefix", metavar="TEXT")
    g.add_argument("--keys", metavar="FILE", help="keys as JSON")


def _file_format(path: str) -> str:
    """ "orc" or "parquet", from the file's first bytes (ORC files start with "ORC")."""
    with open(path, "rb") as fh:
        return "orc" if fh.read(3) == b"ORC" else "parquet"


def _cmd_inspect(args: argparse.Namespace) -> int:
    from bloomskip.lance.dataset import is_lance_dataset

    if is_lance_dataset(args.file):
        return _inspect_lance(args)
    if _file_format(args.file) == "orc":
        return _inspect_orc(args)
    from bloomskip.parquet.inspect import inspect_file

    report = inspect_file(args.file, decryption=_decryption(args))
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"{report['file']}: {report['num_rows']:,} rows in {len(report['row_groups'])} "
        f"row groups, written by {report['created_by']}"
    )
    enc = report.get("encryption")
    if enc:
        print(f"encrypted: {enc['mode']}, {enc['algorithm']}; footer {enc['footer']}")
    header = (
        f"{'rg':>4} {'column':24} {'filter':8} {'bytes':>10} {'fill':>6} {'~ndv':>10} {'fpp':>9}"
    )
    print(header)
    for rg in report["row_groups"]:
        for c in rg["columns"]:
            if c["filter"] == "ok":
                print(
                    f"{rg['row_group']:>4} {c['column'][:24]:24} {'yes':8} {c['bytes']:>10,} "
                    f"{c['fill_ratio']:>6.3f} {c['estimated_ndv'] or 0:>10,} "
                    f"{c['predicted_fpp']:>9.2g}"
                )
            else:
                shown = {"absent": "no", "locked": "LOCKED"}.get(c["filter"], "INVALID")
                print(
                    f"{rg['row_group']:>4} {c['column'][:24]:24} {shown:8}"
                    + ("" if c["filter"] == "absent" else f"  {c['reason']}")
                )
    return 0


def _inspect_lance(args: argparse.Namespace) -> int:
    from bloomskip.lance import open_lance_index

    report = open_lance_index(args.file).describe()
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"{report['dataset']} (Lance, version {report['version']}): {report['fragments']} "
        f"fragments, {report['rows_physical']:,} physical rows"
    )
    for ix in report["indexes"]:
        sizes = ", ".join(f"{n:,} B" for n in ix["filter_sizes"])
        print(
            f"  {ix['name']} on {ix['column']} ({ix['arrow_type']}): BLOOMFILTER, "
            f"number_of_items {ix['number_of_items']:,}, probability {ix['probability']:g}; "
            f"{ix['zones']:,} zones of {sizes}, {ix['filter_bytes']:,} B of filters, "
            f"{ix['disk_bytes']:,} B on disk; {len(ix['segments'])} segment(s); "
            f"fill {ix['fill_mean']:.3f}, predicted fpp <= {ix['predicted_fpp_max']:.2g}"
        )
        if ix["uncovered_fragments"]:
            print(f"    not covered (read in full): fragments {ix['uncovered_fragments']}")
        print(
            f"    {'fragment':>8} {'start':>10} {'length':>10} {'null':>5} {'bytes':>9} {'fill':>6}"
        )
        for z in ix["zone_list"][:20]:
            print(
                f"    {z['fragment_id']:>8} {z['zone_start']:>10,} {z['zone_length']:>10,} "
                f"{'yes' if z['has_null'] else 'no':>5} {z['bytes']:>9,} {z['fill']:>6.3f}"
            )
        if len(ix["zone_list"]) > 20:
            print(f"    ... and {len(ix['zone_list']) - 20} more zones (see --json)")
    for n in report["notes"]:
        print(f"  note: {n}")
    return 0


def _inspect_orc(args: argparse.Namespace) -> int:
    from bloomskip.orc.inspect import inspect_orc

    report = inspect_orc(args.file)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"{report['file']}: {report['num_rows']:,} rows in {len(report['stripes'])} stripes, "
        f"{len(report['row_groups'])} row groups of {report['row_index_stride']:,}, "
        f"{report['compression']}, written by {report['created_by']}"
    )
    print(f"{'rg':>4} {'stripe':>6} {'column':24} {'filter':8} {'bytes':>10} {'k':>3}  stream")
    for rg in report["row_groups"]:
        for c in rg["columns"]:
            if c["filter"] == "absent":
                continue
            if c["filter"] == "ok":
                print(
                    f"{rg['row_group']:>4} {rg['stripe']:>6} {c['column'][:24] or '(root)':24} "
                    f"{'yes':8} {c['bytes']:>10,} {c['k']:>3}  {c['kind']}"
                )
            else:
                print(
                    f"{rg['row_group']:>4} {rg['stripe']:>6} {c['column'][:24]:24} "
                    f"{'INVALID':8}  {c['reason']}"
                )
    return 0


def _probe_literal(text: str, column_type: pa.DataType | None):
    """A VALUE from the command line: raw text for string and binary columns, otherwise
    a SQL literal (``42``, ``DATE '2024-01-31'``, ``X'00ff'``) or, failing that, text."""
    from bloomskip.expr.expressions import Literal
    from bloomskip.expr.sql import parse_literal

    textual = column_type is not None and (
        pa.types.is_string(column_type) or pa.types.is_large_string(column_type)
    )
    if textual:
        return Literal("string", text)
    return parse_literal(text) or Literal("string", text)


def _cmd_probe(args: argparse.Namespace) -> int:
    from bloomskip.expr.bind import resolve

    if _file_format(args.file) == "orc":
        from bloomskip.orc.file import read_orc
        from bloomskip.orc.prune import probe, schema_of

        schema, _ = schema_of(read_orc(args.file))
    else:
        from bloomskip.parquet.footer import read_footer
        from bloomskip.parquet.prune import probe, schema_of  # type: ignore[assignment]

        decryption = _decryption(args)
        schema, _ = schema_of(read_footer(args.file, decryption=decryption))  # type: ignore[arg-type]
    column_type = resolve(args.column, schema).type
    values = [_probe_literal(v, column_type) for v in args.values]
    extra = {} if _file_format(args.file) == "orc" else {"decryption": decryption}
    result = probe(args.file, args.column, values, **extra)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    print(f"{result.file}: column {result.column}, values {', '.join(result.values)}")
    print(f"{'rg':>4} {'first_row':>12} {'rows':>10}  {'result':9}  reason")
    for u in result.units:
        print(f"{u.row_group:>4} {u.first_row:>12,} {u.num_rows:>10,}  {u.result:9}  {u.reason}")
    absent = sum(u.result == "absent" for u in result.units)
    print(f"{absent} of {len(result.units)} row groups: every value absent")
    return 0


def _cmd_prune(args: argparse.Namespace) -> int:
    if _file_format(args.file) == "orc":
        from bloomskip.orc.prune import prune
    else:
        from bloomskip.parquet.prune import prune  # type: ignore[assignment]

    stages = args.stages.split(",") if args.stages else None
    extra: dict = {"stages": stages} if stages else {}
    if _file_format(args.file) != "orc":
        extra["decryption"] = _decryption(args)
    result = prune(args.file, args.where, **extra)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    total = sum(u.num_rows for u in result.units)
    keep = result.matching
    print(f"{result.file}: WHERE {args.where}")
    print(f"{'rg':>4} {'first_row':>12} {'rows':>10}  {'may match':9}  reason")
    for u in result.units:
        answer = "yes" if u.may_match else "no"
        print(f"{u.row_group:>4} {u.first_row:>12,} {u.num_rows:>10,}  {answer:9}  {u.reason}")
    print(
        f"{len(keep)} of {len(result.units)} row groups may match; "
        f"{result.rows_skipped:,} of {total:,} rows skipped"
    )
    return 0


def _cmd_add_bloom(args: argparse.Namespace) -> int:
    from bloomskip.parquet.write import add_bloom_filters

    progress = args.progress or sys.stderr.isatty()
    result = add_bloom_filters(
        args.src,
        args.dst,
        args.columns,
        args.fpp,
        replace=args.replace,
        progress=progress,
        decryption=_decryption(args),
    )
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    where = "in place" if result.path == result.source else f"to {result.path}"
    if not result.rewritten:
        where = "nothing to do, file unchanged"
    print(
        f"{result.source}: {len(result.added)} bloom filters added ({result.filter_bytes:,} B, "
        f"file +{result.bytes_added:,} B) in {result.seconds:.2f} s, {where}"
    )
    if result.added:
        print(f"  {'column':24} {'filters':>7} {'bytes':>12} {'distinct values per row group':>30}")
    for column, count in result.filters_added.items():
        mine = [f for f in result.added if f.column == column]
        ndvs = sorted(f.ndv for f in mine)
        spread = f"{ndvs[0]:,}" if ndvs[0] == ndvs[-1] else f"{ndvs[0]:,}..{ndvs[-1]:,}"
        size = sum(f.length for f in mine)
        print(f"  {column[:24]:24} {count:>7} {size:>12,} {spread:>30}")
    reasons: dict[tuple[str, str], list[int | None]] = {}
    for s in result.skipped:
        reasons.setdefault((s.column, s.reason), []).append(s.row_group)
    for (column, reason), groups in reasons.items():
        which = "all row groups" if groups == [None] else f"{len(groups)} row group(s)"
        print(f"  skipped {column} ({which}): {reason}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bloomskip",
        description="Parquet Split Block Bloom Filters, bit-exact with Spark, pyarrow, "
        "DuckDB and DataFusion.",
        epilog="Run 'bloomskip COMMAND --help' for the options of a command.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser(
        "demo",
        help="point lookups on a 20M-row lake with Spark: full scan vs native bloom "
        "filters vs bloomskip",
        description=_DEMO_HELP,
        epilog=_DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument(
        "--dir",
        default="demo-lake",
        help="working directory for the lake, its copy and the index (default ./demo-lake)",
    )
    d.add_argument("--files", type=int, default=200, help="Parquet files (default 200)")
    d.add_argument(
        "--rows", type=_count, default=20_000_000, help="rows in all (default 20M; 2e6 works)"
    )
    d.add_argument(
        "--row-group", type=_count, default=20_000, help="rows per row group (default 20,000)"
    )
    keep = d.add_mutually_exclusive_group()
    keep.add_argument(
        "--keep",
        dest="fresh",
        action="store_false",
        help="re-use the lake and the copy from an earlier run with the same sizes (default)",
    )
    keep.add_argument(
        "--fresh", action="store_true", help="delete and regenerate the lake and the copy"
    )
    d.add_argument(
        "--repeat", type=int, default=1, help="time each lookup N times, report the median"
    )
    d.add_argument("--json", action="store_true", help="print the results as one JSON object")
    d.add_argument(
        "--sbbf",
        action="store_true",
        help="instead: the filter alone, without Spark (build and probe --n values)",
    )
    d.add_argument("--n", type=_count, default=10_000_000, help="--sbbf: distinct keys (10M)")
    d.add_argument("--fpp", type=float, default=0.01, help="--sbbf: target FPP (0.01)")
    d.set_defaults(func=_cmd_demo, fresh=False)

    s = sub.add_parser(
        "size",
        help="filter size for a number of distinct values and a target FPP",
        description="Size under the 'parquet' policy (arrow-rs/parquet-java formula) and "
        "the 'putze' policy (exact SBBF FPP, as Lance), with the FPP each really gives.",
    )
    s.add_argument("--ndv", required=True, help="distinct values, e.g. 1e6")
    s.add_argument("--fpp", type=float, default=0.01, help="target FPP (default 0.01)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_size)

    i = sub.add_parser(
        "inspect",
        help="the bloom filters of a Parquet or ORC file (per row group and column) "
        "or of a Lance dataset (per zone)",
        description="For every row group and column: whether a bloom filter is there "
        "(or why it is unusable), its size, fill ratio, estimated distinct values, "
        "predicted false-positive rate and position in the file.",
        epilog="example: bloomskip inspect events.parquet --json | jq '.row_groups[0]'\n"
        "         bloomskip inspect spark.parquet --master-key kf=AAECAwQFBgcICQoLDA0ODw== "
        "--master-key kc=...\n\n" + _KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument("file", help="a Parquet or ORC file, or a Lance dataset directory")
    i.add_argument("--json", action="store_true", help="print one JSON object")
    _key_options(i)
    i.set_defaults(func=_cmd_inspect)

    h = sub.add_parser(
        "hash",
        help="the 64-bit hash a Parquet bloom filter stores for values",
        description="Hash values as a column of TYPE is hashed: xxHash64 (seed 0) of the "
        "PLAIN bytes of its Parquet physical type (e.g. int16 widens to INT32). "
        "Binary values are given in hex.",
        epilog="example: bloomskip hash --type string user_000123",
    )
    h.add_argument("--type", choices=sorted(_TYPES), default="string")
    h.add_argument("--encoding", choices=("parquet", "arrow"), default="parquet")
    h.add_argument("values", nargs="+")
    h.set_defaults(func=_cmd_hash)

    pr = sub.add_parser(
        "probe",
        help="ask each row group's bloom filter (Parquet or ORC) whether values may be present",
        description="For each row group: 'absent' (the bloom filter rules out every VALUE),\n"
        "'maybe' (some VALUE may be present) or 'no filter'. VALUEs are converted to the\n"
        "column's type first, as prune does: for string columns a VALUE is the text itself;\n"
        "otherwise it is a SQL literal (42, 1.5, DATE '2024-01-31', X'00ff').",
        epilog="examples: bloomskip probe events.parquet --column user_id u_000123 u_999\n"
        "          bloomskip probe events.parquet -c day \"DATE '2024-01-31'\" --json\n"
        "          bloomskip probe enc.parquet -c ssn 123-45-6789 --keys keys.json\n\n"
        + _KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pr.add_argument("file", help="a Parquet or ORC file")
    pr.add_argument("--column", "-c", required=True, help="the column to probe")
    pr.add_argument("values", nargs="+", metavar="VALUE")
    pr.add_argument("--json", action="store_true", help="print one JSON object")
    _key_options(pr)
    pr.set_defaults(func=_cmd_probe)

    pu = sub.add_parser(
        "prune",
        help="the row groups of a Parquet or ORC file that may hold rows matching a predicate",
        description="Decide for each row group whether it may hold a row matching a SQL\n"
        "predicate, using min/max statistics, then the dictionary (Parquet), then the bloom\n"
        "filter, in Parquet and ORC files alike (ORC units: row groups, stripe by stripe).\n"
        "Say why. Predicates: col = lit, col IN (...), IS [NOT] NULL, !=, NOT IN, AND,\n"
        "OR, NOT; anything else never prunes. Literals: 'text', 42, 1.5, DATE '2024-01-31',\n"
        "TIMESTAMP '2024-01-31 12:00:00' (UTC for instant columns, wall clock for local\n"
        "ones), X'00ff', true/false, NULL. bloomskip never skips a row group that matches.",
        epilog="examples: bloomskip prune events.parquet --where \"user_id = 'u_000123'\"\n"
        '          bloomskip prune events.parquet --where "id IN (7, 9) AND day IS NOT NULL"'
        " --json\n"
        "          bloomskip prune enc.parquet -w \"ssn = '123-45-6789'\" --footer-key "
        "00112233445566778899aabbccddeeff --column-key ssn=0f0e0d0c0b0a09080706050403020100"
        "\n\n" + _KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pu.add_argument("file", help="a Parquet or ORC file")
    pu.add_argument("--where", "-w", required=True, help="the SQL predicate")
    pu.add_argument(
        "--stages",
        help="comma-separated evidence to use: statistics,dictionary,bloom (default: all)",
    )
    pu.add_argument("--json", action="store_true", help="print one JSON object")
    _key_options(pu)
    pu.set_defaults(func=_cmd_prune)

    a = sub.add_parser(
        "add-bloom",
        help="add bloom filters to a Parquet file without rewriting its data",
        description="Add a bloom filter to each row group of the chosen columns, sized for\n"
        "its exact number of distinct values. The data pages are copied byte for byte;\n"
        "the filters and a new footer are appended. Without DST the file is replaced\n"
        "atomically.",
        epilog="examples: bloomskip add-bloom events.parquet --column user_id\n"
        "          bloomskip add-bloom in.parquet out.parquet -c user_id -c sku --fpp 0.001\n"
        "          bloomskip add-bloom enc.parquet -c ssn --keys keys.json\n\n"
        "An encrypted file needs its footer key (the footer is encrypted or signed again)\n"
        "and the key of each encrypted column indexed; their filters are encrypted with\n"
        "the column's key, plaintext columns get plaintext filters.\n\n" + _KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument("src", help="the Parquet file to read")
    a.add_argument("dst", nargs="?", help="where to write (default: replace SRC)")
    a.add_argument(
        "--column", "-c", action="append", dest="columns", metavar="C",
        help="a column to index, repeatable (default: every column a filter can serve)",
    )  # fmt: skip
    a.add_argument("--fpp", type=float, default=0.01, help="target FPP (default 0.01)")
    a.add_argument("--replace", action="store_true", help="rebuild filters already there")
    a.add_argument("--progress", action="store_true", help="progress bar even without a TTY")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    _key_options(a)
    a.set_defaults(func=_cmd_add_bloom)

    from bloomskip.index.commands import register

    register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (BloomskipError, OSError, KeyError) as e:
        print(f"bloomskip: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
