"""Shared fixtures: one local Spark session per pytest run (tests marked ``spark``); an S3
API (moto) and an Azure Blob API (Azurite) on loopback, one per test module."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from hypothesis import settings

# Kernels compile on first use (seconds with a cold numba cache, as in CI): time limits
# per example would fail on compilation, not on bloomskip. Tests check correctness only.
settings.register_profile("bloomskip", deadline=None)
settings.load_profile("bloomskip")

# Workers must run this interpreter (with pyarrow); bind to loopback, no hostname lookup.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A ``local[2]`` SparkSession shared by every Spark test; skipped without pyspark/Java."""
    pytest.importorskip("pyspark")
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        reason = "Spark needs Java 17+ (no java on PATH and no JAVA_HOME)"
        if os.environ.get("CI"):  # CI must prove Spark interop, never skip it
            pytest.fail(reason)
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("bloomskip-tests")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "2g")
        # Faster JVM start for short tests (not for benchmarks: it turns off C2).
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        .config("spark.sql.session.timeZone", "UTC")
        # The bloomskip Python data source prunes with pushed filters (Spark 4.1+).
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server on loopback (``tests/support/s3.py``)."""
    pytest.importorskip("moto")
    from tests.support.s3 import moto_server

    with moto_server() as server:
        yield server


@pytest.fixture(scope="module")
def azure():
    """Azurite on loopback (``tests/support/azure.py``); skipped where ``make test`` could
    not install it (no npm), except in CI, which must prove Azure interop."""
    from tests.support.azure import azurite_server

    try:
        with azurite_server() as server:
            yield server
    except FileNotFoundError as e:
        if os.environ.get("CI"):
            pytest.fail(f"Azurite is not installed: {e}")
        pytest.skip(f"Azurite is not installed: {e}")
