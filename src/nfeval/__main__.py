"""``python -m nfeval`` is the ``nfeval`` command."""

import sys

from nfeval.cli import main

sys.exit(main())
