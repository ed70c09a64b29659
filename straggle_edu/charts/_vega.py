"""Vega-Lite settings that need no Altair: what a chart written as a plain dict (the fleet's HTML report) shares with
the Altair charts (:mod:`~straggle_edu.charts._data` puts them in their theme)."""

from __future__ import annotations

from ..i18n import FONT

__all__ = ["FONT_CONFIG"]

# The fonts of every text a chart draws, in both languages: a Latin face
# first, then the system's CJK faces (see straggle_edu.i18n.FONT).
FONT_CONFIG = {
    "font": FONT,
    "title": {"font": FONT, "subtitleFont": FONT},
    "axis": {"labelFont": FONT, "titleFont": FONT},
    "legend": {"labelFont": FONT, "titleFont": FONT},
    "header": {"labelFont": FONT, "titleFont": FONT},
    "text": {"font": FONT},
}
