"""``python -m solver`` is the ``mbs`` command (see :mod:`solver.cli`)."""
import sys

from .cli import main

sys.exit(main())
