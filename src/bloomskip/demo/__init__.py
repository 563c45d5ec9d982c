"""``bloomskip demo``: point lookups on a 20M-row lake, three ways, with Spark.

* :mod:`.lake` - a synthetic Parquet lake (numpy, seeded), re-used between runs;
* :mod:`.native` - the lake's copy with Spark's native Parquet bloom filters, and
  bloomskip's filters added to the lake in place;
* :mod:`.ways` - lookups by full scan / native bloom / bloomskip, checked to return the
  same rows and measured (shared with ``bench/spark.py``);
* :mod:`.report` - the table the demo prints;
* :mod:`.job` - the job: the steps above in order, the zone index built with Spark;
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
