"""Re-export every public name of a package's modules from the package."""

import importlib
import pkgutil


def export_modules(package, path, namespace):
    """Import each public module of ``package`` (found on ``path``) and copy
    its ``__all__`` names into ``namespace``; return the list of names."""
    names = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for name in getattr(module, "__all__", []):
            namespace[name] = getattr(module, name)
            names.append(name)
    return names
