"""``python -m bloomskip.cli``: the ``bloomskip`` command."""

import sys

from bloomskip.cli import main

sys.exit(main())
