"""ORC bloom filter indexes: file structure (:mod:`.file`), the filters themselves, and
pruning row groups with them (:mod:`.prune`)."""

from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter
from bloomskip.orc.prune import probe, prune

__all__ = ["OrcBloomFilter", "OrcFile", "probe", "prune", "read_orc"]
