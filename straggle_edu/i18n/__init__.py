"""Languages: the library speaks English, or Chinese when asked.

``set_language("zh")`` (or ``STRAGGLE_EDU_LANG=zh`` in the environment)
switches what the library shows a reader: widget labels, chart titles,
axes, legends and tooltips, readouts, ``claim()`` and ``cite()`` lines,
exercise hints and feedback, and the CLI's human-readable output. Error
messages stay English: they name the Python and CLI parameters, which are
the same in both languages.

How a string becomes translatable
---------------------------------
- ``_("text")`` translates now, in the current language. Use it where the
  text is shown, never at import time.
- ``N_("text")`` only marks ``text`` for the catalog and returns it as is:
  for tables of labels built at import time, translated later with ``_``.
- f-strings cannot be extracted: write ``_("{n} workers").format(n=n)``.
- Vega expressions and legend categories are data: translate them where the
  chart's data is built, before Altair sees them.
- Widgets fix their labels when they are built, so a language change applies
  to explorers built after it.

The English text is the key (gettext's msgid). The catalogs are
``straggle_edu/i18n/zh/<room>.po``, one per room of the package, compiled
into one ``locales/zh/LC_MESSAGES/straggle_edu.mo``; see
:mod:`straggle_edu.i18n.catalog` for extraction and compilation with Babel.

Numbers follow Babel's CLDR data, never the operating system's locale:
:func:`format_count` writes 983,040 as "983,040" in English and "98.3万" in
Chinese.

Examples
--------
>>> set_language("zh")
>>> format_count(983_040)
'98.3万'
>>> set_language("en")
>>> _("expected step of 4096 workers (s)"), format_count(983_040)
('expected step of 4096 workers (s)', '983,040')
"""

from __future__ import annotations

import gettext as _gettext
import os
import pathlib

__all__ = [
    "LANGUAGES", "LANG_ENV", "set_language", "get_language", "_", "N_", "ngettext",
    "format_count", "FONT",
]

LANGUAGES = ("en", "zh")
LANG_ENV = "STRAGGLE_EDU_LANG"
DOMAIN = "straggle_edu"
LOCALE_DIR = pathlib.Path(__file__).resolve().parent / "locales"

# The charts' font list: a Latin face first, then CJK faces from the system
# (Debian's fonts-noto-cjk, macOS, Windows), then the generic fallback. No
# font is fetched from the network.
FONT = ('"DejaVu Sans", "Helvetica Neue", Arial, "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", '
        '"PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "WenQuanYi Micro Hei", sans-serif')

# The CLDR locale that each language's numbers follow.
_CLDR = {"en": "en", "zh": "zh_Hans_CN"}

_state = {"lang": None, "translations": {}}


def _check(lang):
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(map(repr, LANGUAGES))}, got {lang!r}")
    return lang


def set_language(lang=None):
    """Choose the language the library shows: ``"en"`` or ``"zh"``.

    Parameters
    ----------
    lang : {"en", "zh"} or None
        None goes back to ``STRAGGLE_EDU_LANG`` from the environment, or
        English when that is unset.

    Notes
    -----
    Charts and explorers built after the call speak the new language; a
    widget already on screen keeps the labels it was built with. The choice
    is also exported as ``STRAGGLE_EDU_LANG``, so that processes started
    afterwards (a ``!straggle-edu analyze ...`` cell, the barrier lab's
    workers) speak it too; ``set_language(None)`` puts the variable back
    as it was.

    Examples
    --------
    >>> set_language("zh"); get_language()
    'zh'
    >>> set_language("fr")
    Traceback (most recent call last):
    ...
    ValueError: lang must be one of 'en', 'zh', got 'fr'
    >>> set_language(None); get_language()
    'en'
    """
    if lang is None:
        _state["lang"] = None
        if "saved_env" in _state:
            saved = _state.pop("saved_env")
            if saved is None:
                os.environ.pop(LANG_ENV, None)
            else:
                os.environ[LANG_ENV] = saved
        return
    _state["lang"] = _check(lang)
    _state.setdefault("saved_env", os.environ.get(LANG_ENV))
    os.environ[LANG_ENV] = lang


def get_language():
    """The language in use: the last :func:`set_language`, else ``STRAGGLE_EDU_LANG``, else ``"en"``.

    Examples
    --------
    >>> set_language("en"); get_language()
    'en'
    """
    if _state["lang"] is not None:
        return _state["lang"]
    env = os.environ.get(LANG_ENV, "").strip().lower()
    if not env:
        return "en"
    env = env.split("_")[0].split("-")[0]
    return _check(env)


def _translations():
    lang = get_language()
    cached = _state["translations"].get(lang)
    if cached is None:
        if lang == "en":
            cached = _gettext.NullTranslations()
        else:
            cached = _gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[lang])
        _state["translations"][lang] = cached
    return cached


def _(message):
    """``message`` in the current language (English is the key).

    Examples
    --------
    >>> set_language("en"); _("workers")
    'workers'
    """
    return _translations().gettext(message)


def N_(message):
    """Mark ``message`` for the catalog without translating it (for tables built at import time).

    Examples
    --------
    >>> N_("workers")
    'workers'
    """
    return message


def ngettext(singular, plural, n):
    """The singular or plural form for ``n``, in the current language.

    Examples
    --------
    >>> set_language("en"); ngettext("{n} worker", "{n} workers", 3).format(n=3)
    '3 workers'
    """
    return _translations().ngettext(singular, plural, n)


def format_count(x):
    """A large count as prose reads it: "983,040" in English, "98.3万" in Chinese.

    Below 10,000 both languages write the whole number with grouping.

    Examples
    --------
    >>> set_language("zh"); format_count(983_040), format_count(4096), format_count(38_400_000)
    ('98.3万', '4,096', '3840万')
    >>> set_language("en"); format_count(983_040)
    '983,040'
    """
    from babel.numbers import format_compact_decimal, format_decimal

    lang = get_language()
    if lang == "zh" and abs(x) >= 10_000:
        return format_compact_decimal(x, format_type="short", locale=_CLDR[lang], fraction_digits=1)
    return format_decimal(round(x) if float(x).is_integer() else x, locale=_CLDR[lang])
