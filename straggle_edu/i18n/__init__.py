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
Chinese; :func:`format_count_exact` adds the exact figure in full-width
parentheses, "98.3万（983,040）", and :func:`format_money` writes dollars
as "$196,608" or "19.66万美元".

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
    "LANGUAGES", "LANG_ENV", "set_language", "get_language", "_", "N_", "ngettext", "translate",
    "format_count", "format_count_exact", "format_money", "FONT",
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


def _translations(lang=None):
    lang = get_language() if lang is None else _check(lang)
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


def translate(message, lang):
    """``message`` in ``lang``, whatever the current language: for a file written in another language (a student
    copy of a Chinese twin, say).

    Examples
    --------
    >>> set_language("en"); translate("workers", "en")
    'workers'
    >>> translate("workers", "fr")
    Traceback (most recent call last):
    ...
    ValueError: lang must be one of 'en', 'zh', got 'fr'
    """
    return _translations(lang).gettext(message)


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


def format_count_exact(x, exact=None):
    """A large count as prose reads it, with the exact figure beside it in Chinese: "98.3万（983,040）".

    ``exact`` is the exact figure as text (the count with grouping by
    default). English has no short form, so it shows the exact figure alone;
    below 10,000 both languages do.

    Examples
    --------
    >>> set_language("zh"); format_count_exact(407_549), format_count_exact(4096)
    ('40.8万（407,549）', '4,096')
    >>> set_language("en"); format_count_exact(407_549)
    '407,549'
    """
    from babel.numbers import format_decimal

    if exact is None:
        exact = format_decimal(round(x) if float(x).is_integer() else x, locale=_CLDR[get_language()])
    if get_language() == "zh" and abs(x) >= 10_000:
        return f"{format_count(x)}（{exact}）"
    return exact


def format_money(x):
    """An amount in US dollars: "$196,608" in English, "19.66万美元" in Chinese.

    Chinese writes amounts of 10,000 and more in 万 (or 亿) with four
    significant figures, so that 196,608 does not read as a rounded
    "19.7万" next to the article's 十九万六千美元.

    Examples
    --------
    >>> set_language("zh"); format_money(196_608), format_money(490_000), format_money(2_000)
    ('19.66万美元', '49万美元', '2,000 美元')
    >>> set_language("en"); format_money(196_608)
    '$196,608'
    """
    from babel.numbers import format_compact_decimal, format_decimal

    lang = get_language()
    plain = format_decimal(round(x) if float(x).is_integer() else x, locale=_CLDR[lang])
    if lang != "zh":
        return f"${plain}"
    if abs(x) < 10_000:
        return f"{plain} 美元"
    scale = 1e4 if abs(x) < 1e8 else 1e8 if abs(x) < 1e12 else 1e12
    digits = max(0, 4 - len(str(int(abs(x) // scale))))
    short = format_compact_decimal(x, format_type="short", locale=_CLDR[lang], fraction_digits=digits)
    return f"{short}美元"
