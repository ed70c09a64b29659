"""Text built once per version of its inputs, kept in the user's cache folder.

Two rooms build a large JavaScript bundle from the installed packages, and it
depends only on their versions: the notebook helpers (Altair's offline
JupyterChart, about 2 s of CPU in every kernel) and the application (the page
script of the site and of the fleet report, about 1.3 s each time). Both keep
it here, under ``$XDG_CACHE_HOME/straggle-edu`` (default ``~/.cache``): a
missing, partial or unwritable cache only costs the build again.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["cached_text"]


def _path(name, key):
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "straggle-edu", f"{name}-{digest}.js")


def cached_text(name, key, build, *, min_chars=100_000):
    """``build()``'s text, built once per ``key`` and read back after that.

    A cached copy shorter than ``min_chars`` is taken as cut short and built again.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()
    >>> calls = []
    >>> def build():
    ...     calls.append(1)
    ...     return "x" * 10
    >>> cached_text("demo", "v1", build, min_chars=5), cached_text("demo", "v1", build, min_chars=5), len(calls)
    ('xxxxxxxxxx', 'xxxxxxxxxx', 1)
    >>> del os.environ["XDG_CACHE_HOME"]
    """
    path = _path(name, key)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if len(text) >= min_chars:
            return text
    except OSError:
        pass
    text = build()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass
    return text
