"""``python -m bloomskip.cli``: the ``bloomskip`` command."""

from bloomskip.cli import run

run()
