"""ORC bloom filter indexes: file structure (:mod:`.file` for the tail, :mod:`.stripes`
per stripe, metadata messages through protobuf in :mod:`.proto`), the filters themselves
(:mod:`.filter`, fed as the writers feed them by :mod:`.feeds`), and pruning row groups
with them (:mod:`.prune`, with :mod:`.schema`, :mod:`.trust` and :mod:`.statistics`), and
adding them to existing files (:mod:`.write`, with :mod:`.build` and :mod:`.rewrite`)."""

from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter
from bloomskip.orc.prune import probe, prune
from bloomskip.orc.write import add_bloom_filters

__all__ = ["OrcBloomFilter", "OrcFile", "add_bloom_filters", "probe", "prune", "read_orc"]
