"""The charts layer: pure functions from data to an Altair chart.

No state, no widgets. Each ``*_chart(data, ...)`` builds exactly one chart,
states every field type, and takes data already aggregated with numpy.

Every public name of every module in this package is available here, so a
notebook can write ``from straggle_edu.charts import <name>``. The modules
are found at import time; adding a module adds its ``__all__``.
"""

from .._imports import skip_slow_optional_imports as _skip
from .._rooms import export_modules as _export

_skip()

__all__ = _export(__name__, __path__, globals())
