"""``python -m bloomskip``: the ``bloomskip`` command (as ``python -m bloomskip.cli``)."""

from bloomskip.cli import run

run()
