"""ORC bloom filter indexes: file structure (:mod:`.file`), and the filters themselves."""

from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter

__all__ = ["OrcBloomFilter", "OrcFile", "read_orc"]
