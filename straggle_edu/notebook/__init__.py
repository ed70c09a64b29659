"""Notebook helpers: what a notebook cell calls to show and to check.

``claim``
    check a number the prose quotes, and show a ✓ line (or raise); with
    ``readings=`` and ``verdict=``, check a claim of the article and show
    its fact-check card.
``timing``
    check a number measured on real processes: the ✓ line when it holds, a
    note (a busy machine) instead of a traceback when it strays.
``reveal``
    show a computed value, unchecked: the answer to a "Guess first", in the
    cell the prompt names (the ``claim`` that checks it sits in a hidden
    check cell below).
``demo_figure``
    a figure of a synthetic demo (notebook 13's demo fleet), checked against
    the prose but marked ``demo:``, never ✓: it agrees with the study it was
    calibrated to by construction.
``say``
    a code cell's sentence, printed in the reader's language (instead of ``print(f"...")``).
``show``
    display a chart or an explorer, offline.
``factcheck``
    the fact-check notebook's claim cards and verdict table.

A notebook's setup cell reads ``from straggle_edu.notebook import claim, cite, calibrated, reveal, say, show``.
"""

from .claims import calibrated, cite, claim, demo_figure, reveal, say, timing
from .display import show

__all__ = ["claim", "timing", "cite", "calibrated", "demo_figure", "reveal", "say", "show"]
