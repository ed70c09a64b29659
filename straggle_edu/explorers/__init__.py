"""The explorers layer: ipywidgets that connect controls to models and charts.

One explorer per idea. Each ``*_explorer(...)`` returns a widget whose
controls are attributes, so a test can set ``.value`` and check the chart.

Every public name of every module in this package is available here, so a
notebook can write ``from straggle_edu.explorers import <name>``. The modules
are found at import time; adding a module adds its ``__all__``.
"""

from .._rooms import export_modules as _export

__all__ = _export(__name__, __path__, globals())
