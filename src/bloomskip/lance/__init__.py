"""Lance interop (the ``bloomskip[lance]`` extra, pylance): read the bloom filter index
Lance writes, and build bloomskip zone indexes over Lance datasets that equal it.

>>> from bloomskip.lance import open_lance_index
>>> ix = open_lance_index("events.lance")                    # doctest: +SKIP
>>> ix.query("user_id = 42 OR s IS NULL").files              # doctest: +SKIP
[FileCandidate(path='fragment:0', ..., zones=[(8192, 8192)], fragment_id=0), ...]
>>> from bloomskip import index
>>> index.build("events.lance", ["user_id"], "events.idx")   # doctest: +SKIP

Modules, following ``zone-index.md`` section 1 (Lance's bloom filter scalar index):

* :mod:`.dataset` - importing pylance, detecting and opening datasets, fragments;
* :mod:`.reader` - Lance's ``bloomfilter.lance`` files as a queryable index;
* :mod:`.source` - a Lance dataset as a zone index source (fragments as files).

Names are imported on first use, so detecting a dataset loads neither pylance nor the
zone index.
"""

from __future__ import annotations

from bloomskip._lazy import exports

_EXPORTS = {
    "LanceBloomIndex": "reader",
    "LanceIndex": "reader",
    "open_lance_index": "reader",
    "LanceSource": "source",
    "is_lance_dataset": "dataset",
}


__getattr__ = exports(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
