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

Numbers follow Babel's CLDR data, never the operating system's locale, and
one rule in Chinese (README, 中文版): below 10,000 a number has no thousands
separator (4096, not 4,096); from 10,000 up it is written in 万 (or 亿).
:func:`format_count` writes 983,040 as "983,040" in English and "98.3万" in
Chinese, 4096 as "4,096" and "4096"; :func:`format_count_exact` adds the
exact figure in full-width parentheses, "98.3万（983,040）";
:func:`format_int` writes a whole number exactly ("1.6384万" for 16,384, a
slider's stop); :func:`format_number` writes a measured value with a format
spec (".1f") and the language's grouping; :func:`format_money` writes
dollars as "$196,608" or "19.66万美元". :func:`fill` fills a translated
template by the same rule: a placeholder whose spec groups thousands
(``{n:,}``, ``{x:,.0f}``) is a quantity, written in Chinese with no separator
below 10,000 and in 万 from 10,000 up.

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
import math
import numbers
import os
import pathlib
import re
import string

__all__ = [
    "LANGUAGES", "LANG_ENV", "WAN", "set_language", "get_language", "_", "N_", "ngettext", "translate",
    "format_count", "format_count_exact", "format_int", "format_number", "format_money", "fill", "join_list", "FONT",
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


# Chinese writes a number below this with no thousands separator, and one from it up in 万 (or 亿).
WAN = 10_000


def _exact(x):
    """``x`` in full, in the current language: grouped in English; in Chinese grouped only from 10,000 up."""
    from babel.numbers import format_decimal

    lang = get_language()
    x = round(x) if float(x).is_integer() else x
    return format_decimal(x, locale=_CLDR[lang], group_separator=lang != "zh" or abs(x) >= WAN)


def format_count(x):
    """A large count as prose reads it: "983,040" in English, "98.3万" in Chinese.

    Below 10,000 the whole number, grouped in English and not in Chinese
    ("4,096", "4096").

    Examples
    --------
    >>> set_language("zh"); format_count(983_040), format_count(4096), format_count(38_400_000)
    ('98.3万', '4096', '3840万')
    >>> set_language("en"); format_count(983_040), format_count(4096)
    ('983,040', '4,096')
    """
    from babel.numbers import format_compact_decimal

    lang = get_language()
    if lang == "zh" and abs(x) >= WAN:
        return format_compact_decimal(x, format_type="short", locale=_CLDR[lang], fraction_digits=1)
    return _exact(x)


def format_count_exact(x, exact=None):
    """A large count as prose reads it, with the exact figure beside it in Chinese: "98.3万（983,040）".

    ``exact`` is the exact figure as text (the count with grouping by
    default). English has no short form, so it shows the exact figure alone;
    below 10,000 both languages do, Chinese without a separator.

    Examples
    --------
    >>> set_language("zh"); format_count_exact(407_549), format_count_exact(4096)
    ('40.8万（407,549）', '4096')
    >>> set_language("en"); format_count_exact(407_549)
    '407,549'
    """
    if exact is None:
        exact = _exact(x)
    if get_language() == "zh" and abs(x) >= WAN:
        return f"{format_count(x)}（{exact}）"
    return exact


def format_int(n):
    """A whole number, exactly: "16,384" in English; in Chinese "16384" below 10,000 and "1.6384万" from it up.

    For the counts a reader sets or reads exactly (a slider's stops, n
    workers in a readout); a rounded figure is :func:`format_count`'s.

    Examples
    --------
    >>> set_language("zh"); [format_int(n) for n in (4096, 10_000, 16_384, 100_000, 1_234_567_890)]
    ['4096', '1万', '1.6384万', '10万', '12.3456789亿']
    >>> set_language("en"); format_int(16_384)
    '16,384'
    """
    from babel.numbers import format_compact_decimal

    n = int(round(n))
    lang = get_language()
    if lang == "zh" and abs(n) >= WAN:
        return format_compact_decimal(n, format_type="short", locale=_CLDR[lang], fraction_digits=12)
    return _exact(n)


def format_number(x, spec=""):
    """A measured value with a format spec, grouped as the language groups it.

    ``spec`` is a Python format spec without the grouping comma (``".0f"``,
    ``".1f"``, ``".3g"``). English groups thousands ("12,345.6"); Chinese
    writes the value below 10,000 with no separator ("4096.0") and from
    10,000 up as :func:`format_count` does ("1.2万").

    Examples
    --------
    >>> set_language("zh"); format_number(1234.56, ".1f"), format_number(123_456.7, ".0f")
    ('1234.6', '12.3万')
    >>> set_language("en"); format_number(1234.56, ".1f"), format_number(123_456.7, ".0f")
    ('1,234.6', '123,457')
    """
    if get_language() == "zh":
        return format_count(x) if math.isfinite(x) and abs(x) >= WAN else format(x, spec)
    return format(x, "," + spec)


def format_money(x):
    """An amount in US dollars: "$196,608" in English, "19.66万美元" in Chinese.

    Chinese writes amounts of 10,000 and more in 万 (or 亿) with four
    significant figures, so that 196,608 does not read as a rounded
    "19.7万" next to the article's 十九万六千美元.

    Examples
    --------
    >>> set_language("zh"); format_money(196_608), format_money(490_000), format_money(2_000)
    ('19.66万美元', '49万美元', '2000 美元')
    >>> set_language("en"); format_money(196_608)
    '$196,608'
    """
    from babel.numbers import format_compact_decimal

    lang = get_language()
    plain = _exact(x)
    if lang != "zh":
        return f"${plain}"
    if abs(x) < 10_000:
        return f"{plain} 美元"
    scale = 1e4 if abs(x) < 1e8 else 1e8 if abs(x) < 1e12 else 1e12
    digits = max(0, 4 - len(str(int(abs(x) // scale))))
    short = format_compact_decimal(x, format_type="short", locale=_CLDR[lang], fraction_digits=digits)
    return f"{short}美元"


class _Formatter(string.Formatter):
    """``str.format``, but in Chinese a grouped field (``{n:,}``) follows the 万 rule."""

    def format_field(self, value, format_spec):
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if "," not in format_spec or not number or get_language() != "zh":
            return super().format_field(value, format_spec)
        text = format(value, format_spec.replace(",", ""))
        try:
            exact = float(text.rstrip("%"))
        except ValueError:
            return text
        if text.endswith("%") or not math.isfinite(exact) or abs(exact) < WAN:
            return text
        from decimal import Decimal

        from babel.numbers import format_compact_decimal

        return format_compact_decimal(Decimal(text), format_type="short", locale=_CLDR["zh"], fraction_digits=12)


_FORMATTER = _Formatter()
# A space the template puts before a Chinese word goes where what precedes it is Chinese too: a number that ends
# in 万 or 亿 (17万卡时), a translated name filled in ({optype} 的 -> 梯度裁剪的).
# An HTML tag between them does not count (<b>6.9315万</b> 个 worker).
_CJK_SPACE = re.compile(r"([\u4e00-\u9fff](?:</?\w+>)*) (?=(?:</?\w+>)*[\u4e00-\u9fff])")


def fill(template, /, **values):
    """``template.format(**values)``, with the Chinese rule for numbers.

    A field whose spec groups thousands (``{n:,}``, ``{x:,.0f}``) is a
    quantity: English groups it ("983,040"); Chinese writes it with no
    separator below 10,000 ("4096") and from 10,000 up exactly in 万 or 亿
    ("98.304万"), and a space between two Chinese characters goes ("17万卡时",
    not "17万 卡时"; "梯度裁剪的", not "梯度裁剪 的"). Other fields (an id,
    a step, a seed) are formatted as ``str.format`` does.

    Examples
    --------
    >>> set_language("zh"); fill("{n:,} 块卡，{h:,.0f} 卡时，第 {step} 步", n=4096, h=983_040.0, step=12345)
    '4096 块卡，98.304万卡时，第 12345 步'
    >>> fill("<b>{n}</b> 个 worker", n="1.2万")
    '<b>1.2万</b>个 worker'
    >>> set_language("en"); fill("{n:,} GPUs, {h:,.0f} GPU-hours", n=4096, h=983_040.0)
    '4,096 GPUs, 983,040 GPU-hours'
    """
    text = _FORMATTER.vformat(template, (), values)
    return _CJK_SPACE.sub(r"\1", text) if get_language() == "zh" else text


def join_list(items):
    """Items of an enumeration joined as the language joins them: "a, b, c"; Chinese "a、b、c".

    Examples
    --------
    >>> set_language("zh"); join_list(["osdi-AR", "osdi-SE"])
    'osdi-AR、osdi-SE'
    >>> set_language("en"); join_list(["osdi-AR", "osdi-SE"])
    'osdi-AR, osdi-SE'
    """
    return ("、" if get_language() == "zh" else ", ").join(map(str, items))
