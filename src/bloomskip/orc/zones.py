"""Time zones as ORC Java reads a stripe's ``writer_timezone``, for timestamp filters.

ORC Java's ``TimestampTreeWriter`` hashes a timestamp as milliseconds of the wall clock in
the writer's zone: ``millis + zone.getOffset(millis)``. This module gives those offsets:

* :func:`zone_name` checks a zone given by name or as a ``zoneinfo.ZoneInfo``;
* :func:`tzinfo` reads a name as Java's ``TimeZone.getTimeZone`` does: a tz database id
  (through ``zoneinfo``) or a custom ``GMT+hh:mm`` id, UTC aliases as UTC;
* :func:`offsets_ms` is ``TimeZone.getOffset`` for an array of instants (epoch ms),
  from a table of each zone's offsets from 1800 to 2200 (:func:`_zone_table`) and
  ``zoneinfo`` one value at a time outside it;
* :func:`wall_instants` goes the other way, wall clocks to instants, saying which wall
  clocks name two instants or none (what Spark's ORC reader makes of an ORC TIMESTAMP
  in its JVM's zone: :mod:`bloomskip.spark.readfile`).

``zoneinfo`` applies a zone's rule for years past its last listed transition, as Java's
``TimeZone`` does; pyarrow's time zone kernels do not (they keep standard time after
2037), which is why they are not used here.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import zoneinfo
from typing import Any

import numpy as np

from bloomskip.errors import InvalidParameterError

_UTC_NAMES = frozenset({"UTC", "GMT", "Etc/UTC", "Etc/GMT", "UCT", "Zulu", "Z", "+00:00"})
_CUSTOM_ZONE_RE = re.compile(r"^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_TABLE_START = -5_364_662_400  # 1800-01-01, in seconds
_TABLE_END = 7_258_118_400  # 2200-01-01


def zone_name(zone: Any) -> str:
    if isinstance(zone, zoneinfo.ZoneInfo):
        zone = zone.key
    if not isinstance(zone, str) or not zone:
        raise InvalidParameterError(
            f"writer_timezone must be a time zone name such as 'America/Los_Angeles' "
            f"(the stripe footer's writer_timezone) or a zoneinfo.ZoneInfo, got {zone!r}"
        )
    tzinfo(zone)  # unknown names fail here, not in the middle of a column
    return zone


@functools.lru_cache(maxsize=64)
def tzinfo(zone: str) -> _dt.tzinfo:
    """A zone name as Java reads it: a tz database id or a custom "GMT+hh:mm" id."""
    if zone in _UTC_NAMES:
        return _dt.UTC
    m = _CUSTOM_ZONE_RE.match(zone)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise InvalidParameterError(f"bad custom writer_timezone {zone!r}")
        return _dt.timezone(sign * _dt.timedelta(hours=hours, minutes=minutes))
    try:
        return zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as e:
        raise InvalidParameterError(
            f"unknown writer_timezone {zone!r}: not a time zone id of the tz database"
        ) from e


@functools.lru_cache(maxsize=64)
def _zone_table(zone: str) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of ``zone`` from 1800 to 2200: (first second of each offset, offset in ms).

    Found by sampling the offset once a day and bisecting each change to the second
    (tz database transitions fall on whole seconds; two changes within one day would
    be missed - the database has none since 1800). Python's ``zoneinfo`` applies the
    zone's rule for years past its last listed transition, as Java's ``TimeZone`` does;
    pyarrow's time zone kernels do not (they keep standard time after 2037).
    """
    tz = tzinfo(zone)

    def offset(sec: int) -> int:
        return round(_dt.datetime.fromtimestamp(sec, tz).utcoffset().total_seconds())

    starts = [_TABLE_START]
    offsets = [offset(_TABLE_START)]
    prev_sec = _TABLE_START
    for sec in range(_TABLE_START + 86_400, _TABLE_END + 86_400, 86_400):
        off = offset(sec)
        if off != offsets[-1]:
            lo, hi = prev_sec, sec
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset(mid) == offsets[-1]:
                    lo = mid
                else:
                    hi = mid
            starts.append(hi)
            offsets.append(offset(hi))
        prev_sec = sec
    return np.array(starts, dtype=np.int64), np.array(offsets, dtype=np.int64) * 1000


def offsets_ms(ms: np.ndarray, zone: str) -> np.ndarray:
    """UTC offset of ``zone`` (ms) at each instant (epoch ms), as ``TimeZone.getOffset``."""
    tz = tzinfo(zone)
    if tz is _dt.UTC or isinstance(tz, _dt.timezone):
        fixed = tz.utcoffset(None)
        return np.full(ms.shape, round(fixed.total_seconds()) * 1000, dtype=np.int64)
    starts, offsets = _zone_table(zone)
    sec = np.floor_divide(ms, 1000)
    out = offsets[np.maximum(np.searchsorted(starts, sec, side="right") - 1, 0)]
    outside = np.flatnonzero((sec < _TABLE_START) | (sec > _TABLE_END))
    for i in outside.tolist():  # rare: before 1800 or after 2200, one at a time
        try:
            off = _dt.datetime.fromtimestamp(int(sec[i]), tz).utcoffset()
            out[i] = round(off.total_seconds()) * 1000
        except (OverflowError, OSError, ValueError):  # beyond datetime's years 1..9999
            out[i] = offsets[0] if sec[i] < _TABLE_START else offsets[-1]
    return out


#: What :func:`wall_instants` says of each wall clock: one instant, two (an hour the
#: clocks went back over), none (an hour they skipped).
ONE, TWO, NONE = 0, 1, 2


def wall_instants(
    walls: np.ndarray, per_second: int, zone: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wall clocks in ``zone`` (int64 counts of ``1 / per_second`` s since 1970-01-01 on
    the wall) as instants (the same unit), by the offsets of :func:`offsets_ms` (Java's
    ``TimeZone``, its rule applied past 2037): per value the instant, what it is
    (:data:`ONE`, :data:`TWO` - the earlier instant is given - or :data:`NONE`) and the
    offset taken (ms). The offsets a day either side are tried: a change of offset of up
    to a day (Samoa skipped one in 2011) is seen; two changes within two days, which the
    database does not have, would give :data:`NONE`."""
    walls = np.asarray(walls, dtype=np.int64)

    def ms(x: np.ndarray) -> np.ndarray:
        return x // (per_second // 1000) if per_second >= 1000 else x * (1000 // per_second)

    def unit(off_ms: np.ndarray) -> np.ndarray:  # offsets are whole seconds
        return (
            off_ms * (per_second // 1000) if per_second >= 1000 else off_ms // (1000 // per_second)
        )

    day = 86_400 * per_second
    before, after = offsets_ms(ms(walls - day), zone), offsets_ms(ms(walls + day), zone)
    first, second = walls - unit(before), walls - unit(after)
    ok_first = offsets_ms(ms(first), zone) == before
    ok_second = offsets_ms(ms(second), zone) == after
    what = np.where(ok_first | ok_second, ONE, NONE).astype(np.int8)
    what[ok_first & ok_second & (first != second)] = TWO
    instants = np.where(ok_first, np.minimum(first, np.where(ok_second, second, first)), second)
    return instants, what, np.where(ok_first, before, after)


def first_change_ms(zone: str) -> int | None:
    """When ``zone`` first changed its offset after 1800 (epoch ms; None: never). Before
    it, a zone keeps its local mean time (ORC's C++ and Java readers disagree there)."""
    tz = tzinfo(zone)
    if tz is _dt.UTC or isinstance(tz, _dt.timezone):
        return None
    starts, _ = _zone_table(zone)
    return int(starts[1]) * 1000 if starts.shape[0] > 1 else None
