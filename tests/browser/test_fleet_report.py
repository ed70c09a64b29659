"""The fleet's HTML report in Chromium with the network blocked: every chart drawn, in both languages."""

from __future__ import annotations

import pytest

import labdriver

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _fleet():
    S = [1.0, 1.05, 1.12, 1.3, 1.8]
    n = len(S)
    worst = [{"job_id": f"{i:04d}", "slowdown": s, "waste": 1 - 1 / s, "gpu_hours_lost": 100.0 * s,
              "analyze": f"straggle-edu analyze {i:04d}.csv"} for i, s in enumerate(sorted(S, reverse=True))]
    figures = {"jobs": n, "analysed": n, "errors": 0, "share_slowed_10pct": 0.6, "gpu_hours": 5000.0, "gpu_hours_lost": 400.0,
               "slowdown_cdf": [[s, (i + 1) / n] for i, s in enumerate(S)],
               "waste_cdf": [[1 - 1 / s, (i + 1) / n] for i, s in enumerate(S)],
               "gpu_hours_lost_by_class": {"compute": 300.0, "communication": 100.0},
               "gpu_hours_lost_by_where": {"last-stage": 250.0, "spread": 150.0}, "worst": worst}
    return [{"job_id": w["job_id"], "error": None} for w in worst], figures


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
