"""Pruning: which units of data (row groups, stripes, zones) may hold matching rows.

* :mod:`.evidence` - what a format supplies: typed evidence per column over units;
* :mod:`.engine` - the one engine that decides units from that evidence, for every
  format and for the zone index;
* :mod:`.result` - what ``prune`` and ``probe`` return, for every file format.
"""

from bloomskip.prune.engine import Pruner, Verdict
from bloomskip.prune.evidence import (
    ColumnEvidence,
    Findings,
    ProbeStatus,
    Proof,
    Stage,
    Status,
    Unavailable,
)

__all__ = [
    "ColumnEvidence",
    "Findings",
    "ProbeStatus",
    "Proof",
    "Pruner",
    "Stage",
    "Status",
    "Unavailable",
    "Verdict",
]
