"""The fleet's HTML report in Chromium with the network blocked: every chart drawn, in both languages."""

from __future__ import annotations

import pytest

import labdriver

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _fleet():
    """Five jobs' rows and their figures, computed by the fleet's own figures (a chart per kind of figure)."""
    from straggle_edu.fleet.figures import fleet_figures

    where = ["single-worker", "last-stage", "spread", "single-dp-rank", "spread"]
    rows = [{"job_id": f"{i:04d}", "path": f"{i:04d}.csv", "slowdown": s, "waste": 1 - 1 / s, "gpus": 8 * (i + 1),
             "hours": 10.0, "gpu_hours_lost": 8 * (i + 1) * 10.0 * (1 - 1 / s),
             "culprit_class": "compute" if i % 2 else "communication", "culprit_where": where[i], "worker_share": 0.8}
            for i, s in enumerate([1.0, 1.05, 1.12, 1.3, 1.8])]
    return rows, fleet_figures(rows)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fleet_report_draws_every_chart_offline(lang, tmp_path, browser_context, blocked_requests):
    from straggle_edu.app.fleet_report import write_report

    rows, figures = _fleet()
    path = write_report(tmp_path, rows, figures, lang=lang)
    blocked_requests.clear()
    errors = []
    with labdriver.StaticServer(tmp_path) as server:
        page = labdriver.open_site_page(browser_context, f"{server.base_url}/{path.name}", errors)
        try:
            states = page.eval_on_selector_all(".se-chart", "els => els.map((e) => e.dataset.state)")
            shot = labdriver.SCREENSHOTS / f"fleet-report-{lang}.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            page.close()
    assert states == ["drawn"] * 4, states
    assert not errors, errors
    assert not blocked_requests, f"the report tried to reach the network: {blocked_requests}"
