"""Keep a kernel's first chart fast.

``import altair`` pulls in jsonschema's format checkers, and one of them
imports ``rfc3987_syntax``, which compiles 38 grammars at import time: about
1.6 s of CPU in every kernel, to validate the "iri" string format that
nothing here uses. :func:`skip_slow_optional_imports` marks that optional
module as absent before Altair loads, so jsonschema skips that one checker.
It changes nothing if the module was already imported.
"""

import sys


def skip_slow_optional_imports():
    sys.modules.setdefault("rfc3987_syntax", None)
