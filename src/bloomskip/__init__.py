"""bloomskip: Parquet Split Block Bloom Filters, bit-exact with Spark, pyarrow, DuckDB and
DataFusion, at native speed.

>>> import bloomskip
>>> f = bloomskip.Sbbf.with_ndv_fpp(ndv=10_000, fpp=0.01)
>>> f.insert(["u-1", "u-2"])
>>> f.check(["u-1", "u-3"]).tolist()
[True, False]
"""

from bloomskip.errors import (
    BloomskipError,
    IncompatibleFiltersError,
    InvalidBitsetError,
    InvalidFilterSizeError,
    InvalidParameterError,
    ReadOnlyFilterError,
    UnsupportedTypeError,
)
from bloomskip.hashing import (
    Encoding,
    HashAlgorithm,
    PhysicalSpec,
    PhysicalType,
    hash_values,
    parquet_spec,
)
from bloomskip.sbbf import Sbbf

__version__ = "0.1.0"

__all__ = [
    "BloomskipError",
    "Encoding",
    "HashAlgorithm",
    "IncompatibleFiltersError",
    "InvalidBitsetError",
    "InvalidFilterSizeError",
    "InvalidParameterError",
    "PhysicalSpec",
    "PhysicalType",
    "ReadOnlyFilterError",
    "Sbbf",
    "UnsupportedTypeError",
    "__version__",
    "hash_values",
    "parquet_spec",
]
