"""``bloomskip demo``: point lookups on a 20M-row lake, three ways, with Spark.

* :mod:`.lake` - a synthetic Parquet lake (numpy, seeded), re-used between runs;
* :mod:`.job` - the job: zone index built with Spark, a copy of the lake with Spark's
  native Parquet bloom filters, lookups by full scan / native bloom / bloomskip, checked
  to return the same rows and timed (shared with ``bench/spark.py``);
* :mod:`.sbbf` - the filter alone, without Spark (``bloomskip demo --sbbf``).
"""

from bloomskip.demo.job import DemoResult, Measurement, ThreeWays, run_demo
from bloomskip.demo.lake import Lake, LakeSpec, LookupKeys, ensure_lake

__all__ = [
    "DemoResult",
    "Lake",
    "LakeSpec",
    "LookupKeys",
    "Measurement",
    "ThreeWays",
    "ensure_lake",
    "run_demo",
]
