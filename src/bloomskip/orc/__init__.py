"""ORC bloom filter indexes: file structure (:mod:`.file`), and the filters themselves."""

from bloomskip.orc.file import OrcFile, read_orc

__all__ = ["OrcFile", "read_orc"]
