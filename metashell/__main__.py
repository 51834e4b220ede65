"""``python -m metashell``: the same entry point as the ``metashell`` console script."""

import sys

from metashell.cli import main

sys.exit(main())
