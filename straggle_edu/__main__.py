"""``python -m straggle_edu`` is the same as the ``straggle-edu`` command."""

import sys

from .app.cli import main

if __name__ == "__main__":
    sys.exit(main())
