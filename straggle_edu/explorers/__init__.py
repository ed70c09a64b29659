"""The explorers layer: ipywidgets that connect controls to models and charts.

One explorer per idea. Each ``*_explorer(...)`` returns a widget whose
controls are attributes, so a test can set ``.value`` and check the chart.

Every public name of every module in this package is available here, so a
notebook can write ``from straggle_edu.explorers import <name>``. The modules
are found at import time; adding a module adds its ``__all__``.
"""

import importlib as _importlib
import pkgutil as _pkgutil

__all__ = []
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _mod = _importlib.import_module(f"{__name__}.{_info.name}")
    for _name in getattr(_mod, "__all__", []):
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)
globals().pop("_info", None)
globals().pop("_mod", None)
