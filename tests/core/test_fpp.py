"""Measured false-positive rate on 1M absent probes against the predicted rate."""

from __future__ import annotations

import numpy as np
import pytest

from bloomskip import Sbbf
from bloomskip.sbbf.sizing import putze_fpp

NUM_BYTES = 1 << 20
PROBES = 1_000_000


def _ndv_for(target: float) -> int:
    """The NDV at which a 1 MiB filter's predicted FPP equals ``target`` (bisection)."""
    lo, hi = 1, 64 * NUM_BYTES
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if putze_fpp(mid, NUM_BYTES) < target else (lo, mid)
    return hi


@pytest.mark.parametrize("target", [0.001, 0.01, 0.1])
def test_measured_fpp_within_15_percent_of_predicted(target):
    ndv = _ndv_for(target)
    rng = np.random.default_rng(int(target * 1e6))
    keys = rng.permutation(ndv + PROBES).astype(np.int64) * 7919 + 13  # distinct
    present, absent = keys[:ndv], keys[ndv:]
    f = Sbbf(NUM_BYTES)
    f.insert(present)
    assert f.check(present).all()
    measured = float(f.check(absent).mean())
    predicted = f.predicted_fpp(ndv)
    assert predicted == pytest.approx(target, rel=0.01)
    assert measured == pytest.approx(predicted, rel=0.15)
    # The estimate from the fill alone (no NDV given) is close as well.
    assert f.predicted_fpp() == pytest.approx(predicted, rel=0.15)
