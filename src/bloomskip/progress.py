"""Progress bars: a tqdm bar when shown, a no-op object when hidden.

Owns: the one way bloomskip shows progress (index builds, adding bloom filters to files).
Follows: tqdm's documented locking (``TqdmDefaultWriteLock``, ``TMonitor``).

A hidden bar must not construct tqdm at all. Even with ``disable=True``, creating a tqdm
bar takes tqdm's global write lock and starts tqdm's monitor thread, which then lives for
the rest of the process and takes that lock every 10 s. On first use the lock creates a
``multiprocessing.RLock``: a semaphore in memory that every process forked afterwards
shares. If a process is SIGKILLed while it holds the semaphore, the semaphore is never
released, and the next bar in every process sharing it waits forever. If a process forks
while its monitor thread holds the lock, the child's copy stays held and the child waits
forever too (issue 18). Bars are hidden by default whenever stderr is not a terminal
(Spark workers, services, tests), so this default path does not touch tqdm.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, Protocol


class Bar(Protocol):
    def update(self, n: int = 1) -> Any: ...


class _Hidden:
    def update(self, n: int = 1) -> None:
        return None


@contextlib.contextmanager
def bar(total: int, desc: str, unit: str, *, show: bool, **options: Any) -> Iterator[Bar]:
    """A bar of ``total`` steps on stderr (tqdm, ``leave=False``) if ``show``, else a
    no-op that never imports or touches tqdm."""
    if not show:
        yield _Hidden()
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, **options) as shown:
        yield shown
