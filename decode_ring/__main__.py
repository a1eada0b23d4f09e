"""``python -m decode_ring``: the ``decode-ring`` command line."""

import sys

from .cli import main

sys.exit(main())
