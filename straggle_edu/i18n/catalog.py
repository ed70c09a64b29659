"""The translation catalogs: extract with Babel, update the ``.po`` files, compile the ``.mo``.

One ``.po`` per room of the package lives in ``straggle_edu/i18n/zh/``:
``charts.po`` holds what ``straggle_edu/charts`` marks with ``_()`` or
``N_()`` (``exercises.po`` also the hints and solutions written in its
``Exercise(...)`` calls), and ``notebooks.po`` holds the labels that the notebooks' code
cells pass to ``claim()``, ``cite()`` and ``calibrated()``. All of them
compile into one ``locales/zh/LC_MESSAGES/straggle_edu.mo``.

After changing a marked string::

    python -m straggle_edu.i18n.catalog update [ROOM ...]   # new msgids appear with an empty msgstr
    # ... translate them in straggle_edu/i18n/zh/<room>.po ...
    python -m straggle_edu.i18n.catalog compile

``tests/test_i18n.py`` fails while a msgid is untranslated, obsolete, or
missing from the compiled ``.mo``.
"""

from __future__ import annotations

import ast
import datetime
import io
import json
import pathlib
import sys

__all__ = ["ROOT", "PO_DIR", "extract", "update", "compile_catalogs", "problems", "NOTEBOOK_CALLS", "EXERCISE_TEXTS"]

PACKAGE = pathlib.Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parent
PO_DIR = pathlib.Path(__file__).resolve().parent / "zh"
MO_PATH = pathlib.Path(__file__).resolve().parent / "locales" / "zh" / "LC_MESSAGES" / "straggle_edu.mo"

_STAMP = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}

# Calls in a notebook's code cells whose labels the library shows (claim, cite, calibrated, demo_figure, reveal): the
# first string argument (or the second, after a fact-check claim's number),
# a cited figure given as text, the keys of ``figures=`` and ``readings=``
# (also of dicts assigned to ``figures`` or ``readings`` before the call),
# and the ``precise=``, ``where=`` and ``source`` strings. ``say(template,
# **values)`` is a code cell's translated print.
NOTEBOOK_CALLS = ("claim", "timing", "cite", "calibrated", "demo_figure", "reveal", "say")
_NOTEBOOK_KEYWORDS = ("precise", "where", "source", "text")


def _strings(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        yield node.lineno, node.value


def _call_messages(call):
    args = list(call.args)
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, int):
        args = args[1:]
    if args:
        yield from _strings(args[0])
    if isinstance(call.func, ast.Name) and call.func.id == "cite":
        for arg in args[1:3]:
            yield from _strings(arg)
    for kw in call.keywords:
        if kw.arg in ("figures", "readings") and isinstance(kw.value, ast.Dict):
            for key in kw.value.keys:
                if key is not None:
                    yield from _strings(key)
        elif kw.arg in _NOTEBOOK_KEYWORDS:
            yield from _strings(kw.value)


def extract_notebook(fileobj, keywords, comment_tags, options):
    """A Babel extraction method for ``.ipynb``: the labels of claim/cite/calibrated calls in code cells."""
    nb = json.load(io.TextIOWrapper(fileobj, encoding="utf-8"))
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        try:
            tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NOTEBOOK_CALLS:
                for lineno, text in _call_messages(node):
                    yield 1000 * (index + 1) + lineno, None, text, [f"cell {index}, {node.func.id}()"]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                    isinstance(t, ast.Name) and t.id.startswith(("figures", "readings")) for t in node.targets):
                # figures = {...}; claim(..., figures=figures): the keys are the table's labels (readings3 = {...}
                # too, for a cell that checks two claims)
                for key in node.value.keys:
                    for lineno, text in _strings(key) if key is not None else ():
                        yield 1000 * (index + 1) + lineno, None, text, [f"cell {index}, {node.targets[0].id}"]


# An exercise's hint and solution are English text that ``Exercise`` translates
# when it prints them: the extractor takes them from the ``Exercise(...)``
# calls themselves (keyword or third and fourth positional argument), so the
# declarations need no ``N_()``.
EXERCISE_TEXTS = ("hint", "solution")


def extract_exercises(fileobj, keywords, comment_tags, options):
    """A Babel extraction method for the exercises: what ``_()``/``N_()`` mark, and the texts of ``Exercise(...)`` calls."""
    from babel.messages.extract import extract_python

    source = fileobj.read()
    yield from extract_python(io.BytesIO(source), keywords, comment_tags, options)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Exercise":
            texts = [kw.value for kw in node.keywords if kw.arg in EXERCISE_TEXTS] + node.args[2:4]
            for text in texts:
                for lineno, message in _strings(text):
                    yield lineno, None, message, []


def _rooms():
    """Room name -> the files whose strings it holds."""
    rooms = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        room = rel.parts[0] if len(rel.parts) > 1 else "package"
        if room in ("i18n",):
            continue
        rooms.setdefault(room, []).append((extract_exercises if room == "exercises" else "python", path))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        rooms.setdefault("notebooks", []).append((extract_notebook, path))
    return rooms


def extract():
    """Extract every room's messages: ``{room: babel Catalog}`` (rooms with no message are left out)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file

    out = {}
    for room, files in _rooms().items():
        catalog = Catalog(project="straggle-edu", domain="straggle_edu")
        for method, path in files:
            if not path.exists():
                continue
            for lineno, message, comments, context in extract_from_file(method, str(path), keywords=KEYWORDS,
                                                                         comment_tags=("TRANSLATORS:",)):
                catalog.add(message, None, [(str(path.relative_to(ROOT)), lineno)], auto_comments=comments,
                            context=context)
        if len(catalog):
            out[room] = catalog
    return out


def _read(path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as fh:
        return read_po(fh, locale="zh_Hans_CN")


def update(rooms=None):
    """Bring ``zh/<room>.po`` in line with the sources (every room, or those named); returns {room: untranslated}."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    PO_DIR.mkdir(parents=True, exist_ok=True)
    counts = {}
    templates = extract()
    for room, template in templates.items():
        if rooms and room not in rooms:
            continue
        path = PO_DIR / f"{room}.po"
        catalog = _read(path) if path.exists() else Catalog(locale="zh_Hans_CN", project="straggle-edu",
                                                             domain="straggle_edu")
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        # A fixed date keeps an update that changes nothing from changing the file.
        catalog.creation_date = catalog.revision_date = _STAMP
        with open(path, "wb") as fh:
            write_po(fh, catalog, width=120, omit_header=False, sort_output=False, ignore_obsolete=True)
        counts[room] = sum(1 for m in catalog if m.id and not _translated(m))
    for path in PO_DIR.glob("*.po"):
        if not rooms and path.stem not in templates:
            path.unlink()
    return counts


def _translated(message):
    if isinstance(message.string, (tuple, list)):
        return all(message.string)
    return bool(message.string)


def _clashes():
    """One msgid, two translations in two rooms: the one .mo can hold only one, so the rooms must agree."""
    by_id = {}
    for path in sorted(PO_DIR.glob("*.po")):
        for message in _read(path):
            if message.id and _translated(message):
                by_id.setdefault(str(message.id), {})[path.name] = str(message.string)
    return [f"{msgid!r} is translated differently in {', '.join(f'{room} ({text})' for room, text in rooms.items())}"
            for msgid, rooms in by_id.items() if len(set(rooms.values())) > 1]


def _merged():
    from babel.messages.catalog import Catalog

    merged = Catalog(locale="zh_Hans_CN", project="straggle-edu", domain="straggle_edu")
    for path in sorted(PO_DIR.glob("*.po")):
        for message in _read(path):
            if message.id and _translated(message) and message.id not in merged:
                merged[message.id] = message
    return merged


def compile_catalogs():
    """Compile every ``zh/*.po`` into the one ``.mo`` the library reads; returns the number of messages."""
    from babel.messages.mofile import write_mo

    merged = _merged()
    MO_PATH.parent.mkdir(parents=True, exist_ok=True)
    with open(MO_PATH, "wb") as fh:
        write_mo(fh, merged, use_fuzzy=False)
    return len(merged)


def problems():
    """What keeps the catalogs from being complete: a list of one-line findings (empty when all is well)."""
    import gettext

    found = []
    templates = extract()
    for room, template in templates.items():
        path = PO_DIR / f"{room}.po"
        if not path.exists():
            found.append(f"{path.relative_to(ROOT)} is missing: run python -m straggle_edu.i18n.catalog update")
            continue
        catalog = _read(path)
        for message in template:
            if not message.id:
                continue
            have = catalog.get(message.id, context=message.context)
            if have is None:
                found.append(f"{path.name}: no entry for {message.id!r} ({message.locations[0][0]})")
            elif not _translated(have) or have.fuzzy:
                found.append(f"{path.name}: untranslated {message.id!r} ({message.locations[0][0]})")
        extra = {m.id for m in catalog if m.id} - {m.id for m in template if m.id}
        found.extend(f"{path.name}: obsolete {msgid!r}" for msgid in sorted(map(str, extra)))
    found.extend(_clashes())
    with open(MO_PATH, "rb") as fh:
        mo = gettext.GNUTranslations(fh)
    for message in _merged():
        if not message.id:
            continue
        if isinstance(message.id, (tuple, list)):
            # A plural entry is read with ngettext: what gettext answers for
            # its singular differs across Python versions (3.10, 3.11.2).
            key, got = message.id[0], mo.ngettext(message.id[0], message.id[1], 1)
            want = message.string[0]
        else:
            key, got, want = message.id, mo.gettext(message.id), message.string
        if got != want:
            found.append(f"{MO_PATH.name} is stale for {key!r}: run python -m straggle_edu.i18n.catalog compile")
            break
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else "check"
    if command == "update":
        for room, missing in update(argv[1:]).items():
            print(f"{room}.po: {missing} untranslated")
    elif command == "compile":
        print(f"compiled {compile_catalogs()} messages into {MO_PATH.relative_to(ROOT)}")
    elif command == "check":
        found = problems()
        print("\n".join(found) if found else "catalogs complete")
        return 1 if found else 0
    else:
        print("usage: python -m straggle_edu.i18n.catalog [update [ROOM ...]|compile|check]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
