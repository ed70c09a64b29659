"""Compatibility shim: ``torchrun -m straggle_edu.probe`` keeps working.

The probe lives in :mod:`straggle_edu.instruments.probe`.
"""

import sys

from .instruments.probe import *  # noqa: F401,F403
from .instruments.probe import __all__, main  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
