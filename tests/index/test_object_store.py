"""The zone index with its source and itself on an S3 API (moto on loopback), on Azure's
Blob API (Azurite on loopback) and on the local file system: build, refresh, query,
status, vacuum, killed and racing commits.

Every scenario runs on both stores with the same assertions: answers hold every
matching row (checked against the data, read back whole), committed versions are
consecutive, a commit that dies before its manifest leaves the previous version, and of
two writers for one version exactly one commits. moto checks ``If-None-Match`` without a
lock, so conflicts are made one after another: a writer is held just before its commit
while the other commits.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bloomskip import index
from bloomskip.errors import (
    CommitConflictError,
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
    SourceError,
)
from bloomskip.index import store
from bloomskip.index.storage import open_storage

pytest.importorskip("moto")
pytest.importorskip("obstore")

ROWS = 3000


class Lake:
    """A small lake of ``uid, name`` files on one store, and its index's name."""

    def __init__(self, kind: str, store, tmp_path) -> None:
        self.kind, self.store = kind, store
        if kind != "local":
            prefix = store.fresh()
            self.parts, self.root = [prefix, "lake"], store.uri(prefix, "lake")
            self.index = store.uri(prefix, "idx")
        else:
            (tmp_path / "lake").mkdir()
            self.parts, self.root = None, str(tmp_path / "lake")
            self.index = str(tmp_path / "idx")
        self.tables: dict[str, pa.Table] = {}
        self.serial = 0

    def write(self, name: str, seed: int, rows: int = ROWS) -> None:
        rng = np.random.default_rng(seed)
        uid = rng.integers(0, 2**40, rows)
        table = pa.table({"uid": uid, "name": [f"n{u % 997}" for u in uid]})
        if self.kind != "local":
            self.store.write_table(table, *self.parts, name, row_group_size=1000)
        else:
            pq.write_table(table, os.path.join(self.root, name), row_group_size=1000)
        self.tables[name] = table

    def delete(self, name: str) -> None:
        if self.kind != "local":
            self.store.delete(*self.parts, name)
        else:
            os.unlink(os.path.join(self.root, name))
        del self.tables[name]

    def path_of(self, name: str) -> str:
        return f"{self.root}/{name}"

    def check(self, sql_values: list[int], *, check_source: bool = True) -> None:
        """Every row with one of the values lies in a candidate zone of its file."""
        zi = index.open(self.index)
        sql = f"uid IN ({', '.join(map(str, sql_values))})"
        res = zi.query(sql, check_source=check_source)
        got = {os.path.basename(f.path): f for f in res.files}
        for name, t in self.tables.items():
            rows = np.flatnonzero(
                pc.is_in(t.column("uid"), value_set=pa.array(sql_values)).to_numpy()
            )
            if rows.size == 0:
                continue
            c = got.get(name)
            assert c is not None, (self.kind, sql, name, res.to_json())
            if c.zones is not None:
                covered = np.zeros(t.num_rows, bool)
                for a, n in c.zones:
                    covered[a : a + n] = True
                assert covered[rows].all(), (self.kind, name, c.zones, rows)

    def values(self, *names: str) -> list[int]:
        return [int(self.tables[n].column("uid")[7].as_py()) for n in names]


@pytest.fixture(params=["local", "s3", "azure"])
def lake(request, tmp_path):
    store = None if request.param == "local" else request.getfixturevalue(request.param)
    return Lake(request.param, store, tmp_path)


def test_build_refresh_query_status_vacuum(lake):
    for i in range(4):
        lake.write(f"p{i}.parquet", i)
    rep = index.build(lake.root, ["uid", "name"], lake.index, zone_rows=500)
    assert rep.version == 1 and rep.files_indexed == 4 and not rep.failed
    lake.check(lake.values("p0.parquet", "p3.parquet"))
    lake.check(lake.values("p1.parquet"), check_source=False)
    assert index.open(lake.index).query("uid = -5").files == []
    # added, rewritten, deleted: candidates in full before the refresh, zones after
    lake.write("p4.parquet", 4)
    lake.write("p1.parquet", 11, rows=2000)
    lake.delete("p2.parquet")
    res = index.open(lake.index).query(f"uid = {lake.values('p4.parquet')[0]}")
    assert {os.path.basename(f.path): f.reason for f in res.files} == {
        "p4.parquet": "not indexed",
        "p1.parquet": "changed since indexing",
    }
    lake.check(lake.values("p4.parquet", "p1.parquet", "p0.parquet"))
    st = index.open(lake.index).status()  # named as queries name them: s3://... on S3
    assert (st["unindexed_files"], st["stale_files"], st["removed_files"]) == (
        [lake.path_of("p4.parquet")], [lake.path_of("p1.parquet")], [lake.path_of("p2.parquet")],
    )  # fmt: skip
    rep = index.refresh(lake.index)
    assert (rep.version, rep.files_indexed, rep.files_dropped) == (2, 2, 2)  # p2, old p1
    lake.check(lake.values("p4.parquet", "p1.parquet", "p0.parquet"), check_source=False)
    st = index.open(lake.index).status()
    assert st["coverage"] == 1.0 and st["files_indexed"] == 4
    removed = index.vacuum(lake.index, keep_versions=1, min_age_s=0)
    assert store.versions(lake.index) == [2] and any("_manifests" in r for r in removed)
    lake.check(lake.values("p4.parquet", "p3.parquet"))


def test_directory_markers_and_empty_objects_are_not_files(s3, tmp_path):
    """Found (probe): a "directory" marker object ``sub/``, which obstore lists as ``sub``,
    was a file that could not be read - a candidate in full of every query, and a new
    version at every refresh. An empty object holds no rows in any format: not listed."""
    lake = Lake("s3", s3, tmp_path)
    lake.write("p0.parquet", 0)
    fs = s3.fs()
    fs.create_dir("/".join([s3.root, *lake.parts, "sub"]))  # writes the marker "sub/"
    with fs.open_output_stream("/".join([s3.root, *lake.parts, "empty"])):
        pass
    rep = index.build(lake.root, ["uid"], lake.index, zone_rows=500)
    assert rep.failed == [] and rep.files_listed == 1
    for check in (True, False):
        assert index.open(lake.index).query("uid = -5", check_source=check).files == []
    assert index.refresh(lake.index).committed is False


def test_the_command_line_builds_and_queries_an_index_on_the_store(lake, capsys):
    import json

    from bloomskip.cli import main

    for i in range(2):
        lake.write(f"p{i}.parquet", i)
    assert main(["index", "build", lake.root, lake.index, "-c", "uid", "--zone-rows", "500"]) == 0
    capsys.readouterr()
    value = lake.values("p1.parquet")[0]
    assert main(["index", "query", lake.index, f"uid = {value}", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [os.path.basename(f["path"]) for f in got["files"]] == ["p1.parquet"]


def test_a_commit_that_dies_before_its_manifest_leaves_the_previous_version(lake, monkeypatch):
    for i in range(3):
        lake.write(f"p{i}.parquet", i)
    index.build(lake.root, ["uid"], lake.index, zone_rows=500)
    lake.write("p3.parquet", 3)

    def die(*a, **k):
        raise KeyboardInterrupt("killed before the manifest")

    with monkeypatch.context() as m:
        m.setattr(store, "publish", die)
        with pytest.raises(KeyboardInterrupt):
            index.refresh(lake.index)
    assert store.versions(lake.index) == [1]
    lake.check(lake.values("p0.parquet", "p3.parquet"))  # p3: not indexed, in full
    removed = index.vacuum(lake.index, min_age_s=0)
    assert removed and all(r.startswith("columns/") or r.startswith("fragments/") for r in removed)
    assert index.refresh(lake.index).version == 2
    lake.check(lake.values("p3.parquet"), check_source=False)


def test_a_killed_first_build_leaves_no_version_and_a_new_build_succeeds(lake, monkeypatch):
    for i in range(2):
        lake.write(f"p{i}.parquet", i)

    def die(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(store, "publish", die)
        with pytest.raises(KeyboardInterrupt):
            index.build(lake.root, ["uid"], lake.index)
    with pytest.raises(IndexNotFoundError):
        index.open(lake.index)
    index.vacuum(lake.index, min_age_s=0)
    assert index.build(lake.root, ["uid"], lake.index).version == 1
    lake.check(lake.values("p0.parquet"))


def test_two_writers_one_version_the_loser_replans(lake, monkeypatch):
    """Writer A is held just before it commits version 2 while writer B commits it; A's
    create fails, it re-plans on B's version (which holds A's file, and misses one added
    since) and commits version 3."""
    for i in range(3):
        lake.write(f"p{i}.parquet", i)
    index.build(lake.root, ["uid"], lake.index, zone_rows=500)
    real = store.publish
    held, go = threading.Event(), threading.Event()
    calls = {"a": 0}

    def publish_a(storage, manifest):
        if threading.current_thread().name == "a" and calls["a"] == 0:
            calls["a"] += 1
            held.set()
            assert go.wait(60)
        return real(storage, manifest)

    monkeypatch.setattr(store, "publish", publish_a)
    lake.write("p3.parquet", 3)
    out = {}
    a = threading.Thread(target=lambda: out.setdefault("a", index.refresh(lake.index)), name="a")
    a.start()
    assert held.wait(60)
    lake.write("p4.parquet", 4)
    out["b"] = index.refresh(lake.index)  # B commits version 2
    lake.write("p5.parquet", 5)
    go.set()
    a.join(120)
    assert out["b"].version == 2 and out["a"].version == 3 and out["a"].retries == 1
    assert out["a"].files_indexed == 1 and out["a"].committed
    assert store.versions(lake.index) == [1, 2, 3]
    values = lake.values("p3.parquet", "p4.parquet", "p5.parquet", "p0.parquet")
    lake.check(values, check_source=False)


def test_exactly_one_create_wins_and_a_retried_write_is_recognised(lake):
    lake.write("p0.parquet", 0)
    index.build(lake.root, ["uid"], lake.index)
    storage = open_storage(lake.index)
    base = store.read_manifest(storage)
    won = store.publish(storage, replace(base, version=2))
    with pytest.raises(CommitConflictError):
        store.publish(storage, replace(base, version=2))
    # the same bytes again (a request retried after it had succeeded): the commit stands
    body = store.manifest_bytes(won)
    assert storage.create(store.manifest_name(2), body) is False
    assert storage.read(store.manifest_name(2)) == body


def test_names_outside_the_index_are_refused(lake):
    lake.write("p0.parquet", 0)
    index.build(lake.root, ["uid"], lake.index)
    storage = open_storage(lake.index)
    for bad in ["../x", "/etc/passwd", "a/../../b", "", "a//b", "x\\y"]:
        with pytest.raises(CorruptFileError):
            storage.read(bad)
    import json

    name = store.manifest_name(1)
    doc = json.loads(storage.read(name))
    doc["columns"]["uid"]["segments"][0]["zones"] = ["../../elsewhere.zones.parquet"]
    del doc["checksum"]  # as a writer would that means harm: the names are checked still
    storage.delete(name)
    storage.create(name, json.dumps(doc).encode())
    with pytest.raises(CorruptFileError, match="not a zones name"):
        index.open(lake.index)


def test_an_index_is_never_put_on_a_data_file_its_lake_or_a_parent_of_it(lake):
    """Found (new-user walkthrough): on S3 an index could be built under a data object's
    own key (``.../p0.parquet/...``, locally refused as a file), and an index path equal
    to the lake or a parent of it gave 'no readable Parquet or ORC file' (the lake's files
    were left out as the index's own) instead of the ownership refusal. Nothing is
    written in any of these cases."""
    lake.write("p0.parquet", 0)
    parent = lake.root.rpartition("/")[0]
    for where, why in [
        (lake.path_of("p0.parquet"), "a file .an object. has this name"),
        (lake.root, "not empty and not a bloomskip index"),
        (parent, "not empty and not a bloomskip index"),
    ]:
        with pytest.raises(InvalidParameterError, match=why):
            index.build(lake.root, ["uid"], where)
    assert [e.rel for e in open_storage(lake.root).list()] == ["p0.parquet"]
    assert store.MARKER not in {e.rel for e in open_storage(parent).list()}


def test_a_same_size_rewrite_within_the_second_is_seen(lake):
    """On an object store modification times have a second's precision: a rewrite to
    the same size within that second is told apart by its ETag."""

    def put(seed: int) -> pa.Table:
        t = pa.table({"uid": np.random.default_rng(seed).integers(0, 2**40, ROWS)})
        options = {"compression": "none", "use_dictionary": False}
        if lake.kind != "local":
            lake.store.write_table(t, *lake.parts, "same.parquet", **options)
        else:
            pq.write_table(t, os.path.join(lake.root, "same.parquet"), **options)
        lake.tables["same.parquet"] = t
        return t

    put(1)
    index.build(lake.root, ["uid"], lake.index, zone_rows=500)
    before = index.open(lake.index).fragments().to_pylist()[0]
    put(2)  # same size, the same second (or the same mtime on a coarse clock)
    after = [f for f in index.open(lake.index).source.list() if f.path.endswith("same.parquet")]
    assert after[0].size == before["size"]
    if lake.kind != "local":
        assert after[0].etag != before["etag"]
        lake.check(lake.values("same.parquet"))  # changed since indexing: read in full


def test_a_missing_bucket_or_missing_credentials_say_so_in_one_line(s3, monkeypatch, capsys):
    """Found (new-user walkthrough): a missing bucket's error ended in the middle of the
    service's XML body, and missing credentials showed only a failed request to the
    instance metadata service (here pointed at a closed loopback port)."""
    from bloomskip.cli import main

    with pytest.raises(SourceError, match=r"\(NoSuchBucket\); the bucket does not exist$"):
        index.open("s3://no-such-bucket/events.idx")
    assert main(["index", "query", "s3://no-such-bucket/x.idx", "k = 1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "<?xml" not in err and "the bucket does not exist" in err
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9")  # nothing listens
    with pytest.raises(SourceError, match="no credentials found: set AWS_ACCESS_KEY_ID"):
        index.open(s3.uri(s3.fresh(), "idx"))


def test_a_lake_of_several_objects_reopens_from_its_index(lake):
    """A source given as several URIs is named in the manifest by their paths, without a
    scheme; reopening it must find the store again (it took them for local paths)."""
    for i in range(3):
        lake.write(f"p{i}.parquet", i)
    files = [lake.path_of("p0.parquet"), lake.path_of("p2.parquet")]
    index.build(files, ["uid"], lake.index, zone_rows=500)
    del lake.tables["p1.parquet"]  # not in the source
    lake.check(lake.values("p0.parquet", "p2.parquet"))
    assert index.refresh(lake.index).committed is False


def test_azure_uri_forms_and_credentials_in_uris(azure, monkeypatch):
    """``az://container/path`` and ``abfss://container@account.dfs.core.windows.net/path``
    name the same objects; pyarrow's Azure file system is configured from the variables
    obstore reads (pyarrow reads none). A credential in a URI's query would be stored in
    the index: refused, with the variable to use."""
    from bloomskip.objstore import filesystem

    prefix = azure.fresh()
    t = pa.table({"uid": np.arange(100, dtype=np.int64)})
    azure.write_table(t, prefix, "lake", "a.parquet")
    abfs = f"abfss://{azure.root}@devstoreaccount1.dfs.core.windows.net/{prefix}/lake"
    for uri in (azure.uri(prefix, "lake"), abfs):
        fs, path = filesystem(uri)
        assert path == f"{azure.root}/{prefix}/lake"
        assert fs.get_file_info(path + "/a.parquet").size > 0
    rep = index.build(abfs, ["uid"], azure.uri(prefix, "idx"))
    assert rep.files_indexed == 1
    assert [f.path for f in index.open(azure.uri(prefix, "idx")).query("uid = 7").files] == [
        f"{abfs}/a.parquet"  # named as the lake was
    ]
    for uri in (
        "s3://bucket/lake?secret_key=abc&endpoint_override=x",
        azure.uri(prefix, "lake") + "?sv=2024&sig=abc",
    ):
        with pytest.raises(SourceError, match=r"credential in the URI \((secret_key|sig)\)"):
            index.build(uri, ["uid"], azure.uri(prefix, "idx2"))
    with pytest.raises(SourceError, match="for another endpoint write az://container/path"):
        filesystem(f"abfs://devstoreaccount1@127.0.0.1:{azure.port}/{azure.root}/x")
    monkeypatch.delenv("AZURE_STORAGE_ACCOUNT_NAME")  # the abfss URI names it
    res = index.open(azure.uri(prefix, "idx")).query("uid = 7")  # the lake listed
    assert [f.path for f in res.files] == [f"{abfs}/a.parquet"]
    monkeypatch.delenv("AZURE_STORAGE_USE_EMULATOR")
    with pytest.raises(SourceError, match=r"name the container .* and the account"):
        filesystem("az://c/lake")


def test_etags_are_compared_in_one_form():
    """Found (Azurite probe): Azure's List Blobs gives ETags unquoted, a HEAD quoted; every
    blob looked changed while it was indexed, so nothing was ever indexed on Azure."""
    from bloomskip.sources.files import etag

    assert etag("0x8DC") == etag('"0x8DC"') == '"0x8DC"'
    assert etag('W/"x"') == 'W/"x"' and etag(None) is None


def test_a_loser_never_reuses_zones_made_another_way_than_the_winner_s(lake, monkeypatch):
    """Found (probe): a refresh (A) held before its commit while a build (B) overwrote the
    index with another encoding of ``small`` (int16: Parquet hashes it as INT32, Arrow as
    2 bytes) re-planned on B's version but took its own result for F, hashed the old way:
    ``small = v`` missed F, trusted or not. A second race, B overwriting with other zones,
    made A's retry fail ('cuts zones of 1000 rows, ... overwrite') instead of re-planning.
    An earlier attempt's result is taken again only for the same zoning and settings."""

    def put(name: str, seed: int) -> None:
        uid = np.random.default_rng(seed).integers(0, 2**40, ROWS)
        t = pa.table({"uid": uid, "small": pa.array(uid % 30000, pa.int16())})
        if lake.kind != "local":
            lake.store.write_table(t, *lake.parts, name, row_group_size=1000)
        else:
            pq.write_table(t, os.path.join(lake.root, name), row_group_size=1000)
        lake.tables[name] = t

    for i in range(3):
        put(f"p{i}.parquet", i)
    index.build(lake.root, ["small"], lake.index, zone_rows=500)
    real, events = store.publish, {n: (threading.Event(), threading.Event()) for n in "ab"}
    held = set()

    def publish(storage, manifest):
        name = threading.current_thread().name
        if name in events and name not in held:
            held.add(name)
            events[name][0].set()
            assert events[name][1].wait(60)
        return real(storage, manifest)

    monkeypatch.setattr(store, "publish", publish)
    for round, (option, version) in enumerate(
        [({"encoding": "arrow", "zone_rows": 500}, 3), ({"zone_rows": 1000}, 5)]
    ):
        held.clear()
        for e in (*events["a"], *events["b"]):
            e.clear()
        out: dict = {}

        def run(name, fn, out=out):
            out[name] = fn()

        build = lambda option=option: index.build(  # noqa: E731
            lake.root, ["small"], lake.index, overwrite=True, **option
        )
        b = threading.Thread(target=run, args=("b", build), name="b")
        b.start()
        assert events["b"][0].wait(60)  # B listed the lake, holds before its commit
        put(f"f{round}.parquet", 100 + round)
        refresh = lambda: index.refresh(lake.index)  # noqa: E731
        a = threading.Thread(target=run, args=("a", refresh), name="a")
        a.start()
        assert events["a"][0].wait(60)  # A indexed the new file, holds
        events["b"][1].set()
        b.join(60)
        events["a"][1].set()
        a.join(60)
        assert out["a"].version == version and out["a"].retries == 1, out
        t = lake.tables[f"f{round}.parquet"]
        for check_source in (True, False):
            for v in t.column("small").to_pylist()[:5]:
                got = index.open(lake.index).query(f"small = {v}", check_source=check_source)
                assert lake.path_of(f"f{round}.parquet") in [f.path for f in got.files], v
    assert index.open(lake.index).manifest.zoning.zone_rows == 1000


def test_a_lake_of_several_objects_in_another_account_stays_there(azure):
    """Found (probe): a lake given as several ``abfss://container@acct2...`` URIs was
    named in the manifest by its bare paths, so it was listed - sizes, ETags - in the
    environment's account: a file rewritten in acct2 looked unchanged, a false negative,
    and refresh saw nothing. The URIs are kept as given, and candidates are named in
    acct2 (as ``az://``, a reader would have read the environment's account)."""
    from bloomskip.objstore import filesystem
    from tests.support.azure import OTHER_ACCOUNT

    prefix = azure.fresh()
    fs = azure.fs(OTHER_ACCOUNT)
    base = f"abfss://{azure.root}@{OTHER_ACCOUNT}.dfs.core.windows.net/{prefix}"

    def put(name: str, lo: int, account_fs) -> None:
        t = pa.table({"uid": np.arange(lo, lo + 100, dtype=np.int64)})
        pq.write_table(t, f"{azure.root}/{prefix}/{name}", filesystem=account_fs)

    for name, lo in (("a.parquet", 1000), ("b.parquet", 1100)):
        put(name, lo, fs)
        put(name, lo - 1000, azure.fs())  # the same names, same sizes, in the env's account
    index.build([f"{base}/a.parquet", f"{base}/b.parquet"], ["uid"], azure.uri(prefix, "idx"))
    zi = index.open(azure.uri(prefix, "idx"))
    from bloomskip.sources import resolve

    mine = [f"{base}/a.parquet", f"{base}/b.parquet/"]
    env = [azure.uri(prefix, "a.parquet"), azure.uri(prefix, "b.parquet")]
    assert resolve(mine).same_lake(zi.source) and not resolve(env).same_lake(zi.source)
    (found,) = zi.query("uid = 1005").files
    assert found.path == f"{base}/a.parquet"  # in acct2, for a reader to read it there
    got, path = filesystem(found.path)
    assert pq.read_table(path, filesystem=got).column("uid")[5].as_py() == 1005
    put("a.parquet", 7700, fs)  # rewritten in acct2 only
    got = index.open(azure.uri(prefix, "idx")).query("uid = 7705")
    assert [(f.path, f.reason) for f in got.files] == [
        (f"{base}/a.parquet", "changed since indexing")
    ]
    rep = index.refresh(azure.uri(prefix, "idx"))
    assert rep.committed and rep.files_indexed == 1


def test_an_s3a_lake_is_its_s3_lake(s3, tmp_path):
    """Hadoop's name for a bucket (``s3a://``, as Spark users write it) is the same lake:
    built by one name, the index answers by ``s3://``, reopens, and refreshes as unchanged."""
    from bloomskip.sources import resolve

    lake = Lake("s3", s3, tmp_path)
    for i in range(2):
        lake.write(f"p{i}.parquet", i)
    hadoop = lake.root.replace("s3://", "s3a://", 1)
    assert resolve(hadoop).same_lake(resolve(lake.root + "/"))
    rep = index.build(hadoop, ["uid"], lake.index, zone_rows=500)
    assert rep.files_indexed == 2 and not rep.failed
    lake.check(lake.values("p0.parquet", "p1.parquet"))
    res = index.open(lake.index).query(f"uid = {lake.values('p1.parquet')[0]}")
    assert [f.path for f in res.files] == [lake.path_of("p1.parquet")]
    assert index.refresh(lake.index).files_indexed == 0


def test_a_store_that_never_answers_fails_in_bounded_time(s3, monkeypatch):
    """Found (probe): an endpoint that accepted connections and never replied held a
    query for 181 s (obstore's default: 30 s a request, retried for 3 minutes). A
    silent connection now fails after :data:`STALL_S` (made short here), and requests
    are retried 3 times within :data:`RETRY_S`."""
    import socket
    import threading
    import time

    from bloomskip import objstore

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # and never answer
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setattr(objstore, "STALL_S", 0.3)
    monkeypatch.setattr(objstore, "RETRY_S", 1)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.getsockname()[1]}")
    try:
        t0 = time.monotonic()
        with pytest.raises(SourceError) as e:
            index.open("s3://silent-bucket/events.idx")
        assert time.monotonic() - t0 < 10
        assert "\n" not in str(e.value) and "silent-bucket" in str(e.value), e.value
        assert "; the store did not answer (check the endpoint: " in str(e.value)
    finally:
        stop.set()
        thread.join()
        for c in held:
            c.close()
        server.close()


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_body_of_many_buffers_is_written_back_to_back(where, request, tmp_path):
    """Parts and slabs are written as lists of buffers (no join on the local disk, where
    ``writev`` takes at most 1,024 at a time): every byte lands, in order, empty buffers
    and views included."""
    from bloomskip.index.storage import open_storage

    if where == "s3":
        s3 = request.getfixturevalue("s3")
        root = s3.uri(s3.fresh(), "ix")
    else:
        root = str(tmp_path / "ix")
    rng = np.random.default_rng(4)
    chunks = [
        rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in rng.integers(0, 40, 2500)
    ]
    body = [memoryview(c) if i % 3 else c for i, c in enumerate(chunks)]
    storage = open_storage(root)
    storage.write("columns/0-x/a.slab", body)
    storage.write("columns/0-x/b.blocks", body, durable=False)
    for rel in ("columns/0-x/a.slab", "columns/0-x/b.blocks"):
        assert storage.read(rel) == b"".join(chunks)


def test_short_writes_go_on_where_they_stopped(tmp_path, monkeypatch):
    from bloomskip.index.storage import open_storage

    real = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, bufs: real(fd, [memoryview(bufs[0])[:5]]))
    chunks = [b"abcdefghijkl", np.arange(7, dtype="<u8"), b"", memoryview(b"xyz"), b"0123456"]
    storage = open_storage(str(tmp_path / "ix"))
    storage.write("columns/0-x/a.slab", chunks)
    want = b"".join(memoryview(c).cast("B").tobytes() for c in chunks)
    assert storage.read("columns/0-x/a.slab") == want
