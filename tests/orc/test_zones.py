"""Wall clocks back to instants by Java's zone rules (:func:`bloomskip.orc.zones.wall_instants`),
checked against Python's ``zoneinfo``, which applies a zone's rule past 2037 as Java does."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip.orc import zones

ZONES = ["America/New_York", "Australia/Lord_Howe", "Europe/Dublin", "Pacific/Apia", "Asia/Kolkata"]
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@settings(max_examples=300, deadline=None)
@given(
    zone=st.sampled_from(ZONES),
    second=st.integers(
        int(dt.datetime(1800, 1, 2, tzinfo=dt.UTC).timestamp()),
        int(dt.datetime(2199, 12, 30, tzinfo=dt.UTC).timestamp()),
    ),
)
def test_every_instant_comes_back_from_its_wall_clock(zone, second):
    """An instant's wall clock names it: alone (ONE) or with another an hour the clocks
    went back over (TWO, the earlier given), never NONE."""
    local = (EPOCH + dt.timedelta(seconds=second)).astimezone(zoneinfo.ZoneInfo(zone))
    wall = int((local.replace(tzinfo=None) - EPOCH.replace(tzinfo=None)).total_seconds())
    got, what, offset = zones.wall_instants(np.array([wall * 10**6]), 10**6, zone)
    assert what[0] in (zones.ONE, zones.TWO)
    if what[0] == zones.ONE:
        assert got[0] == second * 10**6
    else:
        assert got[0] <= second * 10**6
        assert got[0] // 10**6 == int(local.replace(fold=0).timestamp())
    assert offset[0] == int(local.utcoffset().total_seconds()) * 1000 or what[0] == zones.TWO


def test_gaps_overlaps_and_years_past_the_listed_changes():
    def wall(*a) -> int:
        return int((dt.datetime(*a) - dt.datetime(1970, 1, 1)).total_seconds()) * 10**9

    walls = np.array(
        [wall(2079, 6, 30, 12, 43), wall(2024, 11, 3, 1, 30), wall(2024, 3, 10, 2, 30)]
    )
    got, what, _ = zones.wall_instants(walls, 10**9, "America/New_York")
    assert what.tolist() == [zones.ONE, zones.TWO, zones.NONE]
    summer = dt.datetime(2079, 6, 30, 16, 43, tzinfo=dt.UTC)  # EDT in 2079, as Java has it
    assert got[0] == int(summer.timestamp()) * 10**9
    assert got[1] == int(dt.datetime(2024, 11, 3, 5, 30, tzinfo=dt.UTC).timestamp()) * 10**9
    _, what, _ = zones.wall_instants(np.array([wall(2011, 12, 30, 12)]), 10**9, "Pacific/Apia")
    assert what.tolist() == [zones.NONE]  # the day Samoa skipped
    got, what, offset = zones.wall_instants(
        np.array([wall(2024, 1, 5, 3) // 10**9]), 1, "GMT+05:30"
    )
    assert (got[0], what[0], offset[0]) == (
        wall(2024, 1, 4, 21, 30) // 10**9,
        zones.ONE,
        19_800_000,
    )


def test_a_zone_s_first_change_of_offset_ends_its_local_mean_time():
    def at(*a) -> int:
        return int(dt.datetime(*a, tzinfo=dt.UTC).timestamp()) * 1000

    assert at(1914, 1, 1) <= zones.first_change_ms("America/Sao_Paulo") <= at(1914, 1, 2)
    assert at(1883, 11, 18) <= zones.first_change_ms("America/New_York") <= at(1883, 11, 19)
    assert zones.first_change_ms("UTC") is None and zones.first_change_ms("GMT+05:30") is None
