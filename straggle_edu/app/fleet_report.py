"""The fleet's HTML report: one offline page of figures, charts and the worst jobs.

:func:`write_report` writes ``DIR/report.html`` (``report.zh.html`` in
Chinese) from the fleet's rows (``DIR/jobs.parquet``'s schema) and figures
(``DIR/fleet.json``, :func:`straggle_edu.fleet.figures.fleet_figures`). The
page is one file that works with no network: the charts
(:mod:`straggle_edu.charts.fleet`) are drawn by the Vega bundle of the static
site (:func:`straggle_edu.app.site.page_script`, from the installed
``vl-convert``), inlined, never fetched from a CDN.

What it shows:

- the fleet's figures beside the OSDI 2025 study's (cited, never checked:
  the study is another cluster). When the fleet is the demo (``fleet.json``
  has ``demo``), a ``demo:`` note says its figures were calibrated to the
  study's, so that they agree by construction, and its column says so;
- the CDF of waste, where the GPU-hours lost sit (jobs that lost most
  first), GPU-hours lost by each job's top culprit;
- the worst jobs, each with the ``straggle-edu analyze`` line that opens it;
- the jobs that could not be analysed, with their one-line error.

``straggle-edu fleet`` runs through :func:`configure_fleet` and
:func:`run_fleet` here: the fleet room's own subcommand
(:mod:`straggle_edu.fleet.cli`), then the report of what it wrote, in the
language of the run (``--lang zh``). The fleet room never draws, so the
report is written from this room, which may import both.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from ..i18n import _, fill, format_count, format_int, get_language

__all__ = ["write_report", "report_html", "REPORT_NAMES", "configure_fleet", "run_fleet"]

#: The report's file name in each language.
REPORT_NAMES = {"en": "report.html", "zh": "report.zh.html"}
_HTML_LANG = {"en": "en", "zh": "zh-CN"}
_MAX_ERRORS = 50

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif;
  max-width: 64em; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.5; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.8em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child, td code { white-space: nowrap; }
code { background: #f0f0f0; padding: 0 0.3em; font-size: 0.92em; }
.note { color: #555; font-size: 0.9em; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5em; }
.se-chart { min-height: 2em; }
"""


def _esc(text):
    return html.escape(str(text), quote=True)


def _tag(name, text, cls=None):
    """``<name>text</name>``, the text escaped."""
    attr = f' class="{cls}"' if cls else ""
    return f"<{name}{attr}>{_esc(text)}</{name}>"


def _pct(x, digits=1):
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{100 * float(x):.{digits}f}%"


def _num(x, fmt=".3f"):
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(float(x), fmt)


def _hours(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return format_count(round(float(x)))


def _comparison(figures):
    """Rows (what, this fleet, the study) of the table of figures."""
    from ..models.osdi2025 import STUDY

    q, wq = figures.get("waste_quantiles", {}), figures.get("slowdown_quantiles", {})
    lost, total = figures.get("gpu_hours_lost"), figures.get("gpu_hours")
    wasted = lost / total if lost is not None and total else None
    return [
        (_("number of jobs"), format_int(figures.get("jobs", 0)), format_int(STUDY["jobs"].value)),
        (_("jobs at S >= 1.1 (slowed by 10% or more)"), _pct(figures.get("share_slowed_10pct")),
         _pct(STUDY["jobs_slowed_10pct"].value)),
        (_("the same, weighted by GPU-hours"), _pct(figures.get("share_slowed_10pct_gpu_hours")), "–"),
        (_("waste of the median job"), _pct(q.get("p50")), _pct(STUDY["waste_median"].value)),
        (_("waste of the p90 job"), _pct(q.get("p90")), _pct(STUDY["waste_p90"].value)),
        (_("waste of the p99 job"), _pct(q.get("p99")), _pct(STUDY["waste_p99"].value)),
        (_("GPU-hours wasted, over all jobs"), _pct(wasted), _pct(STUDY["gpu_hours_wasted"].value)),
        (_("slowdown S of the median / p90 / p99 job"),
         " / ".join(_num(wq.get(k)) for k in ("p50", "p90", "p99")), "–"),
        (_("slowed jobs where one worker explains most of the excess, step after step (the study: worker faults)"),
         _pct(figures.get("share_slowed_single_worker")), _pct(STUDY["worker_fault_share"].value)),
        (_("slowed jobs where one DP rank explains most of the excess, step after step"),
         _pct(figures.get("share_slowed_single_dp_rank")), "–"),
    ]


def _demo_note(demo):
    jobs = demo.get("synthetic_jobs")
    return fill(_("demo: this fleet is the demo fleet (seed {seed}). Its {jobs} synthetic jobs are drawn from distributions "
                  "calibrated to the study's figures, fitted by hand: where its figures match the study's below, they match "
                  "by construction, not by measurement. The draw is in {truth}."),
                seed=demo.get("seed"), jobs=format_int(jobs) if isinstance(jobs, (int, float)) else jobs,
                truth=demo.get("demo_json"))


def _table(head, rows, numeric=()):
    cells = "".join(f"<th>{_esc(h)}</th>" for h in head)
    body = []
    for row in rows:
        tds = "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _culprit(row):
    """The top culprit of one row, in words: optype, where, the kind."""
    from ..charts.fleet import CULPRIT_CLASSES, CULPRIT_WHERE

    parts = []
    if row.get("top_optype"):
        parts.append(f"<code>{_esc(row['top_optype'])}</code>")
    if row.get("culprit_where") in CULPRIT_WHERE:
        parts.append(_esc(_(CULPRIT_WHERE[row["culprit_where"]])))
    if row.get("culprit_class") in CULPRIT_CLASSES:
        parts.append(_esc(_(CULPRIT_CLASSES[row["culprit_class"]])))
    if get_language() == "zh" and len(parts) > 1:  # backward-compute（最后一个阶段，计算）
        return f"{parts[0]}（{'，'.join(parts[1:])}）"
    return ", ".join(parts) or "–"


def _worst_table(figures, by_id):
    rows = []
    for w in figures.get("worst", []):
        row = by_id.get(w.get("job_id"), {})
        rows.append((_esc(w.get("job_id")), _num(w.get("slowdown")), _pct(w.get("waste")), _hours(w.get("gpu_hours_lost")),
                     _culprit(row), f"<code>{_esc(w.get('analyze', ''))}</code>"))
    head = (_("job id"), "S", _("waste"), _("GPU-hours lost"), _("top culprit"), _("open it with"))
    return _table(head, rows, numeric=(1, 2, 3))


def _error_table(rows):
    bad = [r for r in rows if r.get("error")]
    if not bad:
        return _tag("p", _("Every job was analysed."))
    shown = [(_esc(r.get("job_id")), f"<code>{_esc(r['error'])}</code>") for r in bad[:_MAX_ERRORS]]
    more = ""
    if len(bad) > _MAX_ERRORS:
        more = _tag("p", fill(_("... and {n} more: see the error column of jobs.parquet."), n=format_int(len(bad) - _MAX_ERRORS)),
                    "note")
    return _table((_("job id"), _("error")), shown) + more


def _chart_blocks(figures):
    """``(html, specs)``: a div per chart and its Vega-Lite spec.

    The specs are the fleet charts' plain dicts (``*_spec``), with the charts' config (the fonts, and in Chinese
    the numbers' locale): writing them needs no Altair, whose import (with the rest of the charts) was most of the
    time a report took to write.
    """
    from ..charts._vega import theme_config
    from ..charts.fleet import lost_by_culprit_spec, lost_curve_spec, waste_cdf_spec, worst_jobs_spec

    specs = []
    if figures.get("waste_cdf"):
        specs.append(waste_cdf_spec(figures))
    if (figures.get("lost_curve") or {}).get("by_lost"):
        specs.append(lost_curve_spec(figures))
    if figures.get("gpu_hours_lost_by_class") or figures.get("gpu_hours_lost_by_where"):
        specs.append(lost_by_culprit_spec(figures))
    if figures.get("worst"):
        specs.append(worst_jobs_spec(figures))
    parts = []
    for i, chart in enumerate(specs):
        spec = json.dumps({**chart, "config": theme_config()}, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
        parts.append(f'<div class="se-chart" id="chart-{i}"></div>'
                     f'<script type="application/json" class="se-spec" data-chart="chart-{i}">{spec}</script>')
    return "".join(parts), len(specs)


def report_html(rows, figures):
    """The report page, in the current language, as one HTML string (the Vega bundle inlined).

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        The fleet's rows (``DIR/jobs.parquet``'s schema).
    figures : dict
        The fleet's figures (``DIR/fleet.json``).

    Returns
    -------
    str

    Examples
    --------
    >>> page = report_html([], {"jobs": 0, "analysed": 0, "errors": 0})
    >>> page.startswith("<!DOCTYPE html>"), "<script src=" in page
    (True, False)
    """
    from ..fleet.remedies import records
    from .site import page_script

    rows = records(rows)
    by_id = {r.get("job_id"): r for r in rows}
    charts, n_charts = _chart_blocks(figures)
    title = fill(_("Fleet report: {jobs} jobs"), jobs=format_int(figures.get("jobs", len(rows))))
    summary = fill(_("{analysed} analysed, {errors} could not be analysed. Every job's row is in jobs.parquet (and jobs.csv); "
                     "these figures are in fleet.json."), analysed=format_int(figures.get("analysed", 0)),
                   errors=format_int(figures.get("errors", 0)))
    study = _("The study: Lin et al., OSDI 2025, 3,079 jobs of at least 128 GPUs over five months of a ByteDance "
              "cluster. Its figures are cited, not checked: the study is another cluster, its jobs are not these.")
    how = _("S is a job's slowdown: its step time over the ideal step time with every straggler removed (what-if "
            "analysis). Waste = 1 - 1/S, the share of the job's GPU-hours lost. GPU-hours lost = GPUs x hours x waste. "
            "A job's top culprit is the optype, stage, DP rank or worker whose S_X, alone, is largest; docs/fleet.md "
            "states the rules that say where it sits. One worker (or DP rank) counts only when it persists: it "
            "carries at least half of the job's excess in more than half of the steps, as a slow GPU or link does "
            "and a GC pause does not.")
    script = page_script().replace("</script", "<\\/script")
    demo = figures.get("demo")
    ours = _("this fleet (demo: calibrated to the study)") if demo else _("this fleet")
    body = [
        _tag("h1", title), _tag("p", summary),
        _tag("h2", _("This fleet beside the study")),
        _tag("p", _demo_note(demo), "note demo") if demo else "",
        _table((_("figure"), ours, _("OSDI 2025 study (cited)")), [(_esc(a), b, c) for a, b, c in _comparison(figures)],
               numeric=(1, 2)),
        _tag("p", study, "note"),
        _tag("h2", _("Charts")) if n_charts else "", f'<div class="charts">{charts}</div>',
        _tag("h2", _("The worst jobs")), _worst_table(figures, by_id),
        _tag("h2", _("Jobs that could not be analysed")), _error_table(rows),
        _tag("h2", _("How to read it")), _tag("p", how),
    ]
    return (f'<!DOCTYPE html>\n<html lang="{_HTML_LANG[get_language()]}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1.0">\n<title>{_esc(title)}</title>\n'
            f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(b for b in body if b)
            + f"\n<script>{script}</script>\n</body>\n</html>\n")


def write_report(out_dir, rows, figures, lang="en"):
    """Write the fleet's offline HTML report into ``out_dir``; return its path.

    The page is written as the fleet's store writes its files
    (:func:`straggle_edu.fleet.store.atomic_write`): to a temporary
    ``.tmp-*`` name beside it, flushed to disk, then renamed, so the report
    is never half-written; what a killed run leaves is removed by the next
    fleet run in that folder (:class:`straggle_edu.fleet.store.Store`).

    Parameters
    ----------
    out_dir : str or os.PathLike
        The fleet's output folder (it must exist).
    rows : list of dict or pandas.DataFrame
        The fleet's rows (``DIR/jobs.parquet``'s schema).
    figures : dict
        The fleet's figures (``DIR/fleet.json``).
    lang : {"en", "zh"}
        The report's language: ``report.html`` or ``report.zh.html``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> path = write_report(tempfile.mkdtemp(), [], {"jobs": 0, "analysed": 0, "errors": 0}, lang="zh")
    >>> path.name, '<html lang="zh-CN">' in path.read_text(encoding="utf-8")
    ('report.zh.html', True)
    """
    from .._validate import one_of, require
    from ..fleet.store import atomic_write
    from .cli import speaking

    one_of("lang", lang, list(REPORT_NAMES))
    out = Path(out_dir)
    require(out.is_dir(), "out_dir", str(out), "a folder that exists")
    with speaking(lang):
        page = report_html(rows, figures)
    path = out / REPORT_NAMES[lang]
    atomic_write(path, page.encode("utf-8"))
    return path


def configure_fleet(parser):
    """``straggle-edu fleet``'s arguments: the fleet room's (:func:`straggle_edu.fleet.cli.configure`).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure_fleet(p)
    >>> p.parse_args(["runs/", "--out", "out"]).out
    'out'
    """
    from ..fleet.cli import configure

    configure(parser)


def run_fleet(args):
    """Run the fleet (:func:`straggle_edu.fleet.cli.run`), then write its report into ``--out``; return 0.

    Examples
    --------
    >>> import argparse, contextlib, io, tempfile, pathlib
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> p = argparse.ArgumentParser()
    >>> configure_fleet(p)
    >>> out, printed = tempfile.mkdtemp(), io.StringIO()
    >>> with contextlib.redirect_stdout(printed):
    ...     code = run_fleet(p.parse_args([str(public_trace_path()), "--out", out, "--workers", "0"]))
    >>> code, printed.getvalue().splitlines()[-1].startswith("Report: "), (pathlib.Path(out) / "report.html").is_file()
    (0, True, True)
    """
    from ..fleet.cli import run
    from ..fleet.cluster import stopping_signals
    from ..fleet.store import read_rows

    with stopping_signals():  # SIGTERM: the tables of the jobs finished, "terminated", exit status 143
        code = run(args)
        if code:
            return code
        figures = json.loads((Path(args.out) / "fleet.json").read_text(encoding="utf-8"))
        path = write_report(args.out, read_rows(args.out), figures, lang=get_language())
    print(_("Report: {path}").format(path=path))
    return code
