"""Encrypted Parquet (modular encryption): read, prune and add bloom filters.

* **Spark** (parquet-java 1.17, the shared ``spark`` fixture) writes the same table in
  four encrypted variants - encrypted footer (AES_GCM_V1 and AES_GCM_CTR_V1), plaintext
  footer, and plaintext footer with every column encrypted (unlisted ones with the footer
  key) - plus a plaintext copy, through ``PropertiesDrivenCryptoFactory`` with three master
  keys (footer, ``id``, ``s``/``low``) and a test KMS (``tests/support/java/BloomskipTestKms.java``,
  compiled here: pyspark's jars do not ship parquet-java's test ``InMemoryKMS``; it wraps
  as that mock does, and as :class:`bloomskip.parquet.keytools.InMemoryKms`). Every
  filter bloomskip decrypts equals a rebuild from the values pyarrow decrypts, and every
  predicate prunes exactly as on the plaintext copy.
* **Writing**: bloomskip adds encrypted filters to Spark's and pyarrow's encrypted files;
  Spark reads them with the same keys and skips row groups with them; pyarrow reads the
  same table; the bytes before the footer are unchanged.
* **Keys**: missing keys lock a column (may match, with the reason) and leave the others
  pruning; wrong keys, tampered and truncated modules are typed errors, and a property
  test checks that no tampering ever prunes a row group holding the value.
"""

from __future__ import annotations

import base64
import datetime
import glob
import json
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import Sbbf
from bloomskip.cli import main
from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    DecryptionError,
    InvalidParameterError,
    MissingKeyError,
)
from bloomskip.hashing import hash_values
from bloomskip.parquet import add_bloom_filters, probe, prune
from bloomskip.parquet.aes import (
    BLOOM_FILTER_BITSET,
    DATA_PAGE,
    FOOTER,
    ctr_decrypt,
    ctr_encrypt,
    gcm_decrypt,
    gcm_encrypt,
    module_aad,
)
from bloomskip.parquet.bloom import parse_header, read_bloom_filters
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.footer import read_footer
from bloomskip.parquet.inspect import inspect_file
from bloomskip.parquet.keytools import InMemoryKms, KeyToolsRetriever

pe = pytest.importorskip("pyarrow.parquet.encryption")

MASTER_KEYS = {"kf": bytes(range(16)), "kid": bytes(range(16, 32)), "ks": bytes(range(32, 48))}
KEY_LIST = ", ".join(f"{k}:{base64.b64encode(v).decode()}" for k, v in MASTER_KEYS.items())
ROWS = 24_000
KMS_CLASS = "bloomskip.testkms.BloomskipTestKms"
SPARK_CRYPTO = {
    "parquet.crypto.factory.class": (
        "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory"
    ),
    "parquet.encryption.kms.client.class": KMS_CLASS,
    "parquet.encryption.key.list": KEY_LIST,
}
#: Spark variants: extra writer options (None: the plaintext copy).
VARIANTS = {
    "encrypted_footer": {},
    "ctr": {"parquet.encryption.algorithm": "AES_GCM_CTR_V1"},
    "plaintext_footer": {"parquet.encryption.plaintext.footer": "true"},
    "complete": {
        "parquet.encryption.plaintext.footer": "true",
        "parquet.encryption.complete.columns": "true",
    },
    "plain": None,
}
ENCRYPTED = [v for v in VARIANTS if v != "plain"]
COLUMNS = {
    "id": "id",  # key kid, a bloom filter
    "s": "concat('u', id)",  # key ks, a bloom filter
    "low": "id % 7",  # key ks, dictionary-encoded, no filter
    "plain": "id * 3",  # plaintext (footer key in "complete"), a bloom filter
    # A permutation of the even numbers below 2 * ROWS: min/max never prune it; key kid,
    # no filter from Spark (bloomskip adds one).
    "key": f"(id * 7919) % {ROWS} * 2",
}
PREDICATES = [
    "id = 1234",
    "id IN (5, 23999, 99999)",
    "s = 'u77'",
    "s = 'zz'",
    "s IN ('u1', 'u20000')",
    "low = 3",
    "low = 9",
    "plain = 3000",
    "plain = 3001",
    "key = 4",
    "key = 5",
    "id = 5 OR s = 'u19000'",
    "id = 77 AND low = 0",
    "s IS NULL",
    "low != 2",
]


class PyarrowKms(pe.KmsClient):
    """pyarrow's KMS client interface over bloomskip's in-memory KMS (same master keys)."""

    def __init__(self, config=None):
        super().__init__()
        self.kms = InMemoryKms(MASTER_KEYS)

    def wrap_key(self, key_bytes, master_key_identifier):
        return self.kms.wrap_key(key_bytes, master_key_identifier)

    def unwrap_key(self, wrapped_key, master_key_identifier):
        return self.kms.unwrap_key(wrapped_key, master_key_identifier)


def decryption(**kw) -> Decryption:
    return Decryption.from_kms(InMemoryKms(MASTER_KEYS), **kw)


def pyarrow_decryption():
    factory = pe.CryptoFactory(PyarrowKms)
    config = pe.DecryptionConfiguration(cache_lifetime=datetime.timedelta(seconds=600))
    return factory.file_decryption_properties(pe.KmsConnectionConfig(), config)


def read_with_pyarrow(path) -> pq.ParquetFile:
    return pq.ParquetFile(path, decryption_properties=pyarrow_decryption())


# ---------------------------------------------------------------------------- primitives


def test_module_aad_layout():
    """File AAD, type byte, row group and column (int16 LE), page only for data pages."""
    file_aad = b"prefix" + bytes(8)
    assert module_aad(file_aad, FOOTER) == file_aad + b"\x00"
    assert module_aad(file_aad, BLOOM_FILTER_BITSET, 3, 258) == file_aad + b"\x09\x03\x00\x02\x01"
    assert module_aad(file_aad, DATA_PAGE, 1, 2, 513) == file_aad + b"\x02\x01\x00\x02\x00\x01\x02"
    with pytest.raises(InvalidParameterError):
        module_aad(file_aad, BLOOM_FILTER_BITSET, 40_000, 0)


def test_ciphers_round_trip_and_refuse_tampering():
    key = bytes(range(16))
    body = gcm_encrypt(key, b"hello", b"aad")
    assert len(body) == 12 + 5 + 16 and gcm_decrypt(key, body, b"aad", "m") == b"hello"
    for bad_key, aad, data in [
        (bytes(16), b"aad", body),
        (key, b"aae", body),
        (key, b"aad", body[:-1] + bytes([body[-1] ^ 1])),
    ]:
        with pytest.raises(DecryptionError, match="m: AES-GCM authentication failed"):
            gcm_decrypt(bad_key, data, aad, "m")
    with pytest.raises(CorruptFileError, match="too short"):
        gcm_decrypt(key, body[:20], b"aad", "m")
    page = ctr_encrypt(key, b"page bytes")
    assert ctr_decrypt(key, page, "p") == b"page bytes"


def test_in_memory_kms_wraps_as_parquet_java():
    """Single and double wrapping through the key-tools envelope (PKMT1 JSON)."""
    kms = InMemoryKms(MASTER_KEYS)
    dek = bytes(range(100, 116))
    wrapped = kms.wrap_key(dek, "kid")
    assert kms.unwrap_key(wrapped, "kid") == dek
    with pytest.raises(DecryptionError):
        InMemoryKms({"kid": bytes(16)}).unwrap_key(wrapped, "kid")
    single = {
        "keyMaterialType": "PKMT1",
        "internalStorage": True,
        "isFooterKey": False,
        "masterKeyID": "kid",
        "wrappedDEK": wrapped,
        "doubleWrapping": False,
    }
    assert KeyToolsRetriever(kms)(json.dumps(single).encode()) == dek
    kek, kek_id = bytes(range(50, 66)), bytes(range(16))
    from bloomskip.parquet.keytools import wrap_key_locally

    double = dict(
        single,
        doubleWrapping=True,
        keyEncryptionKeyID=base64.b64encode(kek_id).decode(),
        wrappedKEK=kms.wrap_key(kek, "kid"),
        wrappedDEK=wrap_key_locally(dek, kek, kek_id),
    )
    assert KeyToolsRetriever(kms)(json.dumps(double).encode()) == dek
    external = {"keyMaterialType": "PKMT1", "internalStorage": False, "keyReference": "columnKey0"}
    retriever = KeyToolsRetriever(kms, key_material={"columnKey0": json.dumps(double)})
    assert retriever(json.dumps(external).encode()) == dek
    assert InMemoryKms.from_key_list(KEY_LIST).master_keys == MASTER_KEYS


# ---------------------------------------------------------------------------- Spark files


@pytest.fixture(scope="module")
def kms_jar(tmp_path_factory) -> Path:
    """The test KMS compiled against the parquet-java jars pyspark ships."""
    pyspark = pytest.importorskip("pyspark")
    if shutil.which("javac") is None:
        pytest.skip("javac is needed to build the test KMS for Spark")
    jars = Path(pyspark.__file__).parent / "jars"
    classpath = ":".join(
        str(p)
        for pattern in ("parquet-hadoop-*.jar", "parquet-common-*.jar", "hadoop-client-api-*.jar")
        for p in jars.glob(pattern)
    )
    out = tmp_path_factory.mktemp("kms")
    source = Path(__file__).parents[1] / "support" / "java" / "BloomskipTestKms.java"
    subprocess.run(
        ["javac", "-nowarn", "--release", "17", "-d", str(out), "-cp", classpath, str(source)],
        check=True,
        capture_output=True,
    )
    jar = out / "bloomskip-test-kms.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(out), "bloomskip"], check=True)
    return jar


@pytest.fixture(scope="module")
def spark_crypto(spark, kms_jar):
    """The shared session, with the test KMS on its class path (ADD JAR)."""
    spark.sql(f"ADD JAR {kms_jar}")
    return spark


@pytest.fixture(scope="module")
def spark_files(spark_crypto, tmp_path_factory) -> dict[str, Path]:
    spark = spark_crypto
    out = tmp_path_factory.mktemp("spark-crypto")
    df = spark.range(ROWS).selectExpr(*(f"{e} AS `{n}`" for n, e in COLUMNS.items()))
    files = {}
    for name, extra in VARIANTS.items():
        w = df.coalesce(1).write.option("parquet.block.size", str(64 * 1024))
        w = w.option("parquet.enable.dictionary", "false").option(
            "parquet.enable.dictionary#low", "true"
        )
        for c in ("id", "s", "plain"):
            w = w.option(f"parquet.bloom.filter.enabled#{c}", "true")
            w = w.option(f"parquet.bloom.filter.expected.ndv#{c}", "3000")
        if extra is not None:
            for k, v in SPARK_CRYPTO.items():
                w = w.option(k, v)
            w = w.option("parquet.encryption.footer.key", "kf")
            w = w.option("parquet.encryption.column.keys", "kid:id,key;ks:s,low")
            for k, v in extra.items():
                w = w.option(k, v)
        w.parquet(str(out / name))
        (part,) = glob.glob(str(out / name / "part-*.parquet"))
        files[name] = Path(part)
    return files


def spark_scan(spark, path, where: str, bloom: bool) -> tuple[list, int]:
    """(keys found, rows the Parquet scan output) with Spark's bloom filters on or off;
    the vectorized scan outputs every row of each row group it reads (page index
    filtering is turned off, so that only row groups are skipped)."""
    reader = spark.read.option("parquet.filter.bloom.enabled", str(bloom).lower())
    reader = reader.option("parquet.filter.columnindex.enabled", "false")
    for k, v in SPARK_CRYPTO.items():
        reader = reader.option(k, v)
    df = reader.parquet(str(path)).where(where).select("key")
    rows = sorted(r[0] for r in df.collect())
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName().startswith("AdaptiveSparkPlan"):
        plan = plan.executedPlan()
    leaves = plan.collectLeaves()
    (scan,) = [
        leaves.apply(i) for i in range(leaves.size()) if "Scan" in leaves.apply(i).nodeName()
    ]
    return rows, int(scan.metrics().apply("numOutputRows").value())


def assert_filters_rebuilt(path, dec: Decryption | None, expected_columns: set[str]) -> int:
    """Every filter equals a fresh build, at its size, over the values pyarrow decrypts."""
    pf = read_with_pyarrow(path) if dec is not None else pq.ParquetFile(path)
    footer = read_footer(path, decryption=dec)
    seen = 0
    for f in read_bloom_filters(path, decryption=dec):
        if f.status == "absent":
            continue
        assert f.status == "ok", f
        leaf = footer.leaves[f.column]
        values = pf.read_row_group(f.row_group, columns=[leaf.name]).column(0)
        if pa.types.is_list(values.type):
            values = pc.list_flatten(values)
        rebuilt = Sbbf(f.filter.num_bytes)
        rebuilt.insert_hashes(hash_values(values.drop_null()))
        assert f.filter.to_bytes() == rebuilt.to_bytes(), (path, f.row_group, leaf.name)
        assert leaf.name in expected_columns
        seen += 1
    return seen


@pytest.mark.spark
@pytest.mark.parametrize("variant", ENCRYPTED)
def test_spark_files_decrypt_to_identical_filters(spark_files, variant):
    path = spark_files[variant]
    footer = read_footer(path, decryption=decryption())
    assert footer.encryption == (
        "plaintext footer" if variant in ("plaintext_footer", "complete") else "encrypted footer"
    )
    assert footer.crypto.algorithm == ("AES_GCM_CTR_V1" if variant == "ctr" else "AES_GCM_V1")
    if footer.encryption == "plaintext footer":
        assert footer.crypto.signature == "signature verified"
    plain = read_footer(spark_files["plain"])
    assert [g.num_rows for g in footer.row_groups] == [g.num_rows for g in plain.row_groups]
    assert len(footer.row_groups) >= 8
    groups = len(footer.row_groups)
    assert assert_filters_rebuilt(path, decryption(), {"id", "s", "plain"}) == 3 * groups
    assert read_with_pyarrow(path).read().equals(pq.read_table(spark_files["plain"]))


@pytest.mark.spark
@pytest.mark.parametrize("variant", ENCRYPTED)
def test_spark_files_prune_as_the_plaintext_copy(spark_files, variant):
    dec = decryption()
    for where in PREDICATES:
        got = prune(spark_files[variant], where, decryption=dec)
        want = prune(spark_files["plain"], where)
        assert [(u.may_match, u.reason) for u in got.units] == [
            (u.may_match, u.reason) for u in want.units
        ], where
    got = probe(spark_files[variant], "s", ["u77", "nope"], decryption=dec)
    want = probe(spark_files["plain"], "s", ["u77", "nope"])
    assert [u.values for u in got.units] == [u.values for u in want.units]
    # The dictionary of the encrypted column "low" is decrypted and used.
    reason = prune(spark_files[variant], "low = 3", decryption=dec).units[0].reason
    assert reason.endswith("in the dictionary")


@pytest.mark.spark
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, ROWS - 1), st.sampled_from(["id", "s", "key"]), st.sampled_from(ENCRYPTED))
def test_spark_files_never_prune_a_present_value(spark_files, i, column, variant):
    literal = {"id": str(i), "s": f"'u{i}'", "key": str((i * 7919) % ROWS * 2)}[column]
    result = prune(spark_files[variant], f"{column} = {literal}", decryption=decryption())
    group = next(u for u in result.units if u.first_row <= i < u.first_row + u.num_rows)
    assert group.may_match, group


@pytest.mark.spark
def test_missing_keys_lock_only_their_columns(spark_files):
    only_id = Decryption(
        key_retriever=KeyToolsRetriever(InMemoryKms({k: MASTER_KEYS[k] for k in ("kf", "kid")}))
    )
    for variant in ENCRYPTED:
        path = spark_files[variant]
        for where in ("s = 'zz'", "low = 9", "s = 'u5'"):
            for u in prune(path, where, decryption=only_id).units:
                assert u.may_match and "is encrypted" in u.reason, u
                assert "no master key 'ks'" in u.reason
        # id still prunes exactly as on the plaintext copy
        for where in ("id = 1234", "id IN (5, 23999)", "key = 5"):
            got = [u.may_match for u in prune(path, where, decryption=only_id).units]
            assert got == [u.may_match for u in prune(spark_files["plain"], where).units]
        assert all(u.may_match for u in prune(path, "id = 5 OR s = 'zz'", decryption=only_id).units)
        filters = read_bloom_filters(path, decryption=only_id)
        assert {f.status for f in filters if f.column == 1} == {"locked"}
    # A plaintext footer is readable without any key: its plaintext column prunes.
    path = spark_files["plaintext_footer"]
    footer = read_footer(path)
    assert footer.crypto.signature.startswith("signature not checked")
    with pytest.raises(MissingKeyError, match="signature needs the footer key"):
        read_footer(path, decryption=Decryption(column_keys={"id": bytes(16)}))
    assert [u.may_match for u in prune(path, "plain = 3001").units] == [
        u.may_match for u in prune(spark_files["plain"], "plain = 3001").units
    ]
    assert all(u.may_match for u in prune(path, "id = 1234").units)
    with pytest.raises(MissingKeyError, match=r"encrypted_footer.*footer is encrypted"):
        prune(spark_files["encrypted_footer"], "id = 5")
    report = inspect_file(path)
    assert report["encryption"]["mode"] == "plaintext footer"
    statuses = {c["column"]: c["filter"] for c in report["row_groups"][0]["columns"]}
    assert statuses == {
        "id": "locked",
        "s": "locked",
        "low": "locked",
        "plain": "ok",
        "key": "locked",
    }


@pytest.mark.spark
def test_wrong_keys_are_typed_errors(spark_files):
    wrong = dict(MASTER_KEYS, kf=bytes(16), kid=bytes(range(1, 17)))
    bad = Decryption.from_kms(InMemoryKms(wrong))
    for variant in ("encrypted_footer", "plaintext_footer"):
        with pytest.raises(DecryptionError, match=f"{variant}.*AES-GCM|{variant}.*signature"):
            prune(spark_files[variant], "id = 5", decryption=bad)
    # The right footer key, a wrong column key: that column's metadata fails its tag.
    wrong_column = Decryption.from_kms(
        InMemoryKms(MASTER_KEYS), column_keys={"id": bytes(range(1, 17))}
    )
    for variant in ENCRYPTED:
        with pytest.raises(DecryptionError, match="column id ColumnMetaData"):
            prune(spark_files[variant], "id = 5", decryption=wrong_column)
        assert prune(spark_files[variant], "s = 'u5'", decryption=wrong_column).units


def _filter_span(path, dec, column: str) -> list[tuple[int, int]]:
    footer = read_footer(path, decryption=dec)
    leaf = footer.leaf(column)
    return [
        (rg.columns[leaf.index].bloom_filter_offset, rg.columns[leaf.index].bloom_filter_length)
        for rg in footer.row_groups
    ]


@pytest.mark.spark
def test_tampered_and_truncated_modules(spark_files, tmp_path):
    dec = decryption()
    src = spark_files["encrypted_footer"]
    data = src.read_bytes()
    (off, length), *_ = _filter_span(src, dec, "s")
    bad = tmp_path / "tampered.parquet"
    absent = "s = 'u1000x'"  # inside every row group's min/max; only filters rule it out
    assert prune(src, absent, decryption=dec).units[0].reason.endswith("bloom filter: absent")
    # A flipped bit in the first bitset: that filter is invalid, the row group may match.
    flipped = bytearray(data)
    flipped[off + length - 100] ^= 0x01
    bad.write_bytes(bytes(flipped))
    f = read_bloom_filters(bad, decryption=dec, columns=["s"])[0]
    assert f.status == "invalid" and "AES-GCM authentication failed" in f.reason
    unit = prune(bad, absent, decryption=dec).units[0]
    assert unit.may_match and "bloom filter invalid" in unit.reason
    # A module length that runs past the filter: invalid too.
    cut = bytearray(data)
    cut[off : off + 4] = struct.pack("<I", 10**6)
    bad.write_bytes(bytes(cut))
    assert "runs past" in read_bloom_filters(bad, decryption=dec, columns=["s"])[0].reason
    # The encrypted footer changed or cut: typed errors naming the file.
    footer = read_footer(src, decryption=dec)
    flipped = bytearray(data)
    flipped[footer.footer_offset + footer.footer_length // 2] ^= 0x40
    bad.write_bytes(bytes(flipped))
    with pytest.raises(BloomskipError, match=r"tampered\.parquet"):
        prune(bad, "id = 5", decryption=dec)
    bad.write_bytes(data[:-20] + data[-8:])
    with pytest.raises(BloomskipError, match=r"tampered\.parquet"):
        read_footer(bad, decryption=dec)
    # A plaintext footer changed: its signature fails.
    src = spark_files["plaintext_footer"]
    data = src.read_bytes()
    footer = read_footer(src, decryption=dec)
    raw = bytearray(data)
    i = data.rindex(b"parquet-mr")
    raw[i] ^= 0x20  # "Parquet-mr": still a valid footer
    bad.write_bytes(bytes(raw))
    with pytest.raises(DecryptionError, match="signature does not verify"):
        read_footer(bad, decryption=dec)
    assert footer.num_rows == ROWS


@pytest.mark.spark
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_tampering_never_prunes_a_present_value(spark_files, tmp_path_factory, data):
    """A byte changed in an encrypted filter, encrypted metadata or the footer: typed
    errors, or results that keep every row group holding the value."""
    variant = data.draw(st.sampled_from(["encrypted_footer", "plaintext_footer", "ctr"]))
    src = spark_files[variant]
    dec = decryption()
    footer = read_footer(src, decryption=dec)
    spans = [s for c in ("id", "s") for s in _filter_span(src, dec, c)]
    spans.append((footer.footer_offset, footer.file_size - footer.footer_offset))
    off, length = data.draw(st.sampled_from(spans))
    at = data.draw(st.integers(off, off + length - 1))
    flip = data.draw(st.integers(1, 255))
    raw = bytearray(src.read_bytes())
    raw[at] ^= flip
    path = tmp_path_factory.mktemp("tamper") / "t.parquet"
    path.write_bytes(bytes(raw))
    i = data.draw(st.integers(0, ROWS - 1))
    column = data.draw(st.sampled_from(["id", "s"]))
    literal = str(i) if column == "id" else f"'u{i}'"
    try:
        result = prune(path, f"{column} = {literal}", decryption=dec)
    except BloomskipError as e:
        assert "t.parquet" in str(e)
        return
    group = next(u for u in result.units if u.first_row <= i < u.first_row + u.num_rows)
    assert group.may_match


@pytest.mark.spark
@pytest.mark.parametrize("variant", ["encrypted_footer", "plaintext_footer", "complete"])
def test_spark_reads_filters_bloomskip_adds(spark_crypto, spark_files, tmp_path, variant):
    src = spark_files[variant]
    dst = tmp_path / "added.parquet"
    dec = decryption()
    result = add_bloom_filters(src, dst, columns=["key", "plain"], replace=True, decryption=dec)
    footer = read_footer(dst, decryption=dec)
    groups = len(footer.row_groups)
    assert result.filters_added == {"key": groups, "plain": groups}
    before = read_footer(src, decryption=dec)
    assert dst.read_bytes()[: before.footer_offset] == src.read_bytes()[: before.footer_offset]
    assert footer.encryption == before.encryption
    # Encrypted column -> encrypted filter; plaintext column -> plaintext filter.
    raw = dst.read_bytes()
    for rg in footer.row_groups:
        key_chunk, plain_chunk = rg.columns[footer.leaf("key").index], rg.columns[3]
        assert key_chunk.crypto is not None and key_chunk.bloom_filter_length > 32 + 32 + 15
        if variant != "complete":
            assert plain_chunk.crypto is None
            at = plain_chunk.bloom_filter_offset
            n, hl = parse_header(raw[at : at + 64])
            assert plain_chunk.bloom_filter_length == n + hl
    assert assert_filters_rebuilt(dst, dec, {"id", "s", "plain", "key"}) == 4 * groups
    assert read_with_pyarrow(dst).read().equals(pq.read_table(spark_files["plain"]))
    # Spark reads the file with the same keys and skips row groups with the new filters.
    largest = max(g.num_rows for g in footer.row_groups)
    present = (100 * 7919) % ROWS * 2
    for where, expected in [
        ("key = 20001", []),
        ("key = 30001", []),
        (f"key = {present}", [present]),
    ]:
        on_rows, on_scanned = spark_scan(spark_crypto, dst, where, True)
        off_rows, off_scanned = spark_scan(spark_crypto, dst, where, False)
        assert on_rows == off_rows == expected
        assert off_scanned == ROWS  # statistics alone skip nothing
        # Spark reads just the row groups bloomskip's prune keeps (the same filters)
        kept = prune(dst, where, decryption=dec).units
        assert on_scanned == sum(u.num_rows for u in kept if u.may_match), where
        assert on_scanned <= 2 * largest * max(1, len(expected)), (where, on_scanned)
    # bloomskip prunes with them as with filters added to the plaintext copy.
    plain_dst = tmp_path / "plain.parquet"
    add_bloom_filters(spark_files["plain"], plain_dst, columns=["key", "plain"], replace=True)
    for where in ("key = 5", f"key = {present}", "plain = 3001", "key IN (4, 6, 7)"):
        got = [u.may_match for u in prune(dst, where, decryption=dec).units]
        assert got == [u.may_match for u in prune(plain_dst, where).units], where


@pytest.mark.spark
def test_add_bloom_needs_the_keys(spark_files, tmp_path):
    src = spark_files["plaintext_footer"]
    only_id = Decryption(
        key_retriever=KeyToolsRetriever(InMemoryKms({k: MASTER_KEYS[k] for k in ("kf", "kid")}))
    )
    with pytest.raises(MissingKeyError, match="low is encrypted"):
        add_bloom_filters(src, tmp_path / "x.parquet", columns=["low"], decryption=only_id)
    result = add_bloom_filters(src, tmp_path / "y.parquet", decryption=only_id)
    skipped = {s.column: s.reason for s in result.skipped if s.row_group is None}
    assert "ks" in skipped["low"] and set(result.filters_added) == {"key"}
    no_footer = Decryption(column_keys={"id": bytes(16)})
    with pytest.raises(MissingKeyError, match="footer key"):
        add_bloom_filters(src, tmp_path / "z.parquet", columns=["key"], decryption=no_footer)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.parquet"]


# ---------------------------------------------------------------------------- pyarrow files


@pytest.fixture(scope="module")
def pyarrow_table() -> pa.Table:
    n = 20_000
    ids = np.arange(n, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "s": pa.array([f"user_{i:06d}" for i in ids]),
            "tags": pa.array([[f"t{i % 50}", f"x{i}"] for i in ids]),
            "plain": (ids * 3) % 7919,
        }
    )


@pytest.mark.parametrize(
    ("plaintext_footer", "page_version", "algorithm"),
    [(False, "1.0", "AES_GCM_V1"), (True, "2.0", "AES_GCM_V1"), (False, "2.0", "AES_GCM_CTR_V1")],
    ids=["encrypted_footer_v1", "plaintext_footer_v2", "ctr_v2"],
)
def test_pyarrow_files_round_trip(
    tmp_path, pyarrow_table, plaintext_footer, page_version, algorithm
):
    factory = pe.CryptoFactory(PyarrowKms)
    config = pe.EncryptionConfiguration(
        footer_key="kf",
        column_keys={"kid": ["id", "tags.list.element"], "ks": ["s"]},
        plaintext_footer=plaintext_footer,
        encryption_algorithm=algorithm,
    )
    props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config)
    src, plain = tmp_path / "enc.parquet", tmp_path / "plain.parquet"
    kw = {"row_group_size": 4000, "data_page_version": page_version}
    pq.write_table(pyarrow_table, src, encryption_properties=props, **kw)
    pq.write_table(pyarrow_table, plain, **kw)
    dst, plain_dst = tmp_path / "enc_bloom.parquet", tmp_path / "plain_bloom.parquet"
    dec = decryption()
    added = add_bloom_filters(src, dst, decryption=dec)
    add_bloom_filters(plain, plain_dst)
    assert set(added.filters_added) == {"id", "s", "tags.list.element", "plain"}
    assert read_with_pyarrow(dst).read().equals(pyarrow_table)
    assert assert_filters_rebuilt(dst, dec, {"id", "s", "plain", "tags.list.element"}) == 20
    for where in ("id = 77", "id = 123456", "s = 'user_000077'", "s = 'nope'", "plain = 5"):
        got = prune(dst, where, decryption=dec)
        want = prune(plain_dst, where)
        assert [(u.may_match, u.reason) for u in got.units] == [
            (u.may_match, u.reason) for u in want.units
        ], where


def test_explicit_keys_and_unstored_aad_prefix(tmp_path, pyarrow_table):
    """A uniform key with no key metadata, and an AAD prefix the file does not store."""
    key = bytes(range(200, 216))
    props = pe.create_encryption_properties(key, aad_prefix=b"table/part-0", store_aad_prefix=False)
    src = tmp_path / "enc.parquet"
    pq.write_table(pyarrow_table, src, encryption_properties=props, row_group_size=5000)
    with pytest.raises(MissingKeyError, match="AAD prefix"):
        read_footer(src, decryption=Decryption(footer_key=key))
    with pytest.raises(DecryptionError):
        read_footer(src, decryption=Decryption(footer_key=key, aad_prefix=b"table/part-1"))
    dec = Decryption(footer_key=key, aad_prefix=b"table/part-0")
    dst = tmp_path / "out.parquet"
    add_bloom_filters(src, dst, columns=["s"], decryption=dec)
    read_props = pe.create_decryption_properties(key, aad_prefix=b"table/part-0")
    assert pq.read_table(dst, decryption_properties=read_props).equals(pyarrow_table)
    assert [u.may_match for u in prune(dst, "s = 'user_004999'", decryption=dec).units] == [
        True,
        False,
        False,
        False,
    ]
    # The same through the command line, keys as options and as a JSON file.
    args = ["prune", str(dst), "-w", "s = 'user_004999'", "--json", "--footer-key", key.hex()]
    assert main([*args, "--aad-prefix", "table/part-0"]) == 0
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"footer_key": key.hex(), "aad_prefix": "table/part-0"}))
    assert main(["probe", str(dst), "-c", "s", "user_004999", "--keys", str(keys)]) == 0
    assert main(args) == 2  # no AAD prefix: a typed error, exit code 2


def test_cli_with_master_keys(tmp_path, pyarrow_table, capsys):
    factory = pe.CryptoFactory(PyarrowKms)
    config = pe.EncryptionConfiguration(footer_key="kf", column_keys={"kid": ["id"]})
    props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config)
    src = tmp_path / "enc.parquet"
    pq.write_table(pyarrow_table, src, encryption_properties=props, row_group_size=5000)
    masters = [f"--master-key={k}={base64.b64encode(v).decode()}" for k, v in MASTER_KEYS.items()]
    assert main(["add-bloom", str(src), "-c", "id", *masters]) == 0
    capsys.readouterr()
    assert main(["prune", str(src), "-w", "id = 4999", "--json", *masters]) == 0
    units = json.loads(capsys.readouterr().out)["units"]
    assert [u["may_match"] for u in units] == [True, False, False, False]
    # Without the column's master key: locked, every row group may match, and why.
    assert main(["prune", str(src), "-w", "id = 4999", *masters[:1]]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 row groups may match" in out and "id is encrypted" in out
    assert main(["inspect", str(src), *masters[:1]]) == 0
    out = capsys.readouterr().out
    assert "encrypted: encrypted footer, AES_GCM_V1" in out and "LOCKED" in out
    assert main(["prune", str(src), "-w", "id = 4999"]) == 2
    assert "footer is encrypted" in capsys.readouterr().err
