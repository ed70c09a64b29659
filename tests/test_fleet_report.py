"""The fleet's HTML report: one offline page (no script or stylesheet from the network), in English and Chinese."""

import json
import os
import re

import pytest
from test_charts_fleet import figures as chart_figures

from straggle_edu.app.fleet_report import REPORT_NAMES, write_report
from straggle_edu.charts._vega import theme_config
from straggle_edu.charts.fleet import lost_curve_spec, waste_cdf_spec


def fleet(n=6, errors=1):
    f = chart_figures(n)
    f.update(jobs=n + errors, analysed=n, errors=errors, gpu_hours=10_000.0, share_slowed_10pct_gpu_hours=0.6,
             slowed_jobs=5, share_slowed_single_worker=0.2, share_slowed_single_dp_rank=0.0,
             lost_curve={"by_lost": [[0.0, 0.0], [0.5, 0.9], [1.0, 1.0]], "by_waste": [[0.0, 0.0], [0.5, 0.6], [1.0, 1.0]]},
             waste_quantiles={"p50": 0.08, "p90": 0.2, "p99": 0.4},
             slowdown_quantiles={"p50": 1.1, "p90": 1.3, "p99": 1.5, "max": 1.6})
    rows = [{"job_id": f"j{i}", "top_optype": "backward-compute", "culprit_where": "last-stage", "culprit_class": "compute",
             "error": None} for i in range(n)]
    rows += [{"job_id": f"bad{i}", "error": f"bad{i}.csv: the file is empty"} for i in range(errors)]
    return rows, f


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    rows, figures = fleet()
    out = tmp_path_factory.mktemp("out")
    return {lang: write_report(out, rows, figures, lang=lang).read_text(encoding="utf-8") for lang in ("en", "zh")}


def _specs(page):
    found = re.findall(r'<script type="application/json" class="se-spec" data-chart="([^"]+)">(.*?)</script>', page, re.S)
    return {div: json.loads(text.replace("<\\/", "</")) for div, text in found}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_report_needs_no_network(pages, lang):
    page = pages[lang]
    assert not re.search(r"<script[^>]*\bsrc=", page), "a script from a file or the network"
    assert not re.search(r"""<(link|img|iframe)[^>]*\b(href|src)=["']?https?:""", page, re.I)
    assert "vegaEmbed" in page  # the Vega bundle is inlined


def test_report_draws_each_chart_from_its_spec(pages):
    specs = _specs(pages["en"])
    assert len(specs) == 4
    for div in specs:
        assert f'<div class="se-chart" id="{div}">' in pages["en"]
    rows, figures = fleet()
    # the charts' own specs (test_charts_fleet holds them equal to the notebook's Altair charts), with their fonts
    assert specs["chart-0"] == json.loads(json.dumps({**waste_cdf_spec(figures), "config": theme_config()}))
    # review M8: the slowdown CDF was the waste CDF again; where the GPU-hours lost sit takes its place
    assert specs["chart-1"] == json.loads(json.dumps({**lost_curve_spec(figures), "config": theme_config()}))


def test_writing_the_report_loads_no_altair(tmp_path):
    # Altair and the other chart modules were most of the time `straggle-edu fleet` took to write its report
    import subprocess
    import sys

    code = ("import sys, json; from straggle_edu.app.fleet_report import write_report; "
            "write_report(sys.argv[1], [], json.loads(sys.argv[2])); "
            "print(sorted(m for m in ('altair', 'scipy.stats', 'straggle_edu.charts.tail') if m in sys.modules))")
    figures = fleet()[1]
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), json.dumps(figures)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert len(_specs((tmp_path / "report.html").read_text(encoding="utf-8"))) == 4


def test_report_puts_the_fleet_beside_the_study(pages):
    page = pages["en"]
    assert "<td>jobs at S &gt;= 1.1 (slowed by 10% or more)</td>" in page
    assert '<td class="num">83.3%</td><td class="num">42.5%</td>' in page  # 5 of 6 at S >= 1.1; the study's 42.5%
    assert '<td class="num">40.0%</td><td class="num">45.0%</td>' in page  # p99 waste


def test_report_counts_one_worker_among_the_slowed_jobs(pages):
    # review H3: the share is over the slowed jobs, by culprit_where, and one DP rank stands beside it
    page = pages["en"]
    assert "slowed jobs where one worker explains most of the excess, step after step" in page
    assert '<td class="num">20.0%</td><td class="num">1.7%</td>' in page
    assert "slowed jobs where one DP rank explains most of the excess, step after step" in page


def test_report_of_a_real_fleet_says_nothing_of_a_demo(pages):
    assert "demo:" not in pages["en"] and "calibrated" not in pages["en"]


@pytest.mark.parametrize("lang, words", [("en", ("demo:", "calibrated", "by construction")),
                                         ("zh", ("演示作业集", "校准", "吻合在意料之中"))])
def test_report_of_the_demo_says_it_is_calibrated(tmp_path, lang, words):
    # review M2/H3: the report set the demo's 43.3% beside the study's 42.5% as if it were an independent match
    rows, figures = fleet()
    figures["demo"] = {"seed": 0, "synthetic_jobs": 200, "demo_json": "demo/demo.json", "calibrated_to": "Lin et al."}
    page = write_report(tmp_path, rows, figures, lang=lang).read_text(encoding="utf-8")
    for word in words:
        assert word in page


def test_report_lists_the_worst_jobs_with_their_analyze_line(pages):
    page = pages["en"]
    assert "<code>straggle-edu analyze j0.csv</code>" in page
    assert "<code>backward-compute</code>, the last stage, compute" in page
    assert "<code>bad0.csv: the file is empty</code>" in page


def test_report_in_chinese(pages):
    page = pages["zh"]
    assert '<html lang="zh-CN">' in page and "<h1>作业集报告：7 个作业</h1>" in page
    body = page.split("<body>", 1)[1]
    text = re.sub(r"<script.*?</script>|<code>.*?</code>|<[^>]+>", " ", body, flags=re.S)
    assert "The worst jobs" not in text and "最差的作业" in text
    english = {w for w in re.findall(r"[A-Za-z]{4,}", text)} - {"jobs", "parquet", "json", "fleet", "docs", "OSDI",
                                                                   "Lin", "ByteDance", "rank", "what",
                                                                   "worker", "trace"}  # the zh glossary keeps these
    assert not english, sorted(english)


def test_report_file_names_and_nothing_half_written(tmp_path, monkeypatch):
    rows, figures = fleet(n=2, errors=0)
    synced, fsync = [], os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.fstat(fd).st_ino) or fsync(fd))
    path = write_report(tmp_path, rows, figures)
    assert path == tmp_path / REPORT_NAMES["en"] == tmp_path / "report.html"
    assert path.stat().st_ino in synced  # its bytes were on disk before they took the name (the store's rule)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert "Every job was analysed." in path.read_text(encoding="utf-8")
    before = path.read_bytes()

    def killed(src, dst):
        raise OSError("the run died before the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(OSError):
        write_report(tmp_path, *fleet(n=3, errors=1))
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_report_many_errors_shows_fifty_and_counts_the_rest(tmp_path):
    rows, figures = fleet(n=2, errors=53)
    page = write_report(tmp_path, rows, figures).read_text(encoding="utf-8")
    assert page.count(": the file is empty</code>") == 50
    assert "... and 3 more: see the error column of jobs.parquet." in page


def test_report_from_a_dataframe(tmp_path):
    pd = pytest.importorskip("pandas", reason="pandas is optional: a DataFrame of rows needs it")
    rows, figures = fleet(n=2, errors=1)
    page = write_report(tmp_path, pd.DataFrame(rows), figures).read_text(encoding="utf-8")
    assert "<code>bad0.csv: the file is empty</code>" in page and "Every job was analysed." not in page


def test_report_of_an_empty_fleet(tmp_path):
    page = write_report(tmp_path, [], {"jobs": 0, "analysed": 0, "errors": 0}).read_text(encoding="utf-8")
    assert "Fleet report: 0 jobs" in page and 'class="se-spec"' not in page


@pytest.mark.parametrize("kwargs, match", [({"lang": "fr"}, "lang must be one of 'en', 'zh', got 'fr'"),
                                           ({"out_dir": "/no/such/folder"}, "out_dir must be a folder that exists")])
def test_report_refuses_bad_input(tmp_path, kwargs, match):
    rows, figures = fleet(n=1, errors=0)
    args = {"out_dir": tmp_path, "rows": rows, "figures": figures, **kwargs}
    with pytest.raises(ValueError, match=match):
        write_report(**args)


def test_cli_fleet_on_a_demo_fleet_writes_the_report(tmp_path, capsys):
    # the whole path a reader takes: fleet-demo, then fleet (in this process, --workers 0), then the report
    from straggle_edu.app.cli import main
    from straggle_edu.fleet.store import read_rows
    from straggle_edu.traces import analyze

    assert main(["fleet-demo", str(tmp_path / "demo"), "--jobs", "4", "--seed", "2"]) == 0
    out = tmp_path / "out"
    assert main(["fleet", str(tmp_path / "demo" / "manifest.csv"), "--out", str(out), "--workers", "0"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"Report: {out / 'report.html'}")
    rows = {r["job_id"]: r for r in read_rows(out)}
    st = rows["osdi-ST"]
    assert st["slowdown"] == analyze(tmp_path / "demo" / "public" / "trace-ST.csv").slowdown  # bit for bit
    page = (out / "report.html").read_text(encoding="utf-8")
    worst = max((r for r in rows.values() if r["gpu_hours_lost"] is not None), key=lambda r: r["gpu_hours_lost"])
    assert f"<code>straggle-edu analyze {worst['path']}</code>" in page


def _big_fleet():
    """A fleet of 12,345 jobs, 1,253 of them errors: counts that need grouping (4-5 digits)."""
    rows, figures = fleet(n=2, errors=1253)
    figures.update(jobs=12_345, analysed=11_092, errors=1_253)
    figures["demo"] = {"seed": 0, "synthetic_jobs": 12_342, "demo_json": "demo/demo.json", "calibrated_to": "Lin et al."}
    return rows, figures


@pytest.mark.parametrize("lang, counts", [
    ("en", ("Fleet report: 12,345 jobs", "11,092 analysed, 1,253 could not be analysed", "Its 12,342 synthetic jobs",
            "... and 1,203 more")),
    ("zh", ("作业集报告：1.2345万个作业", "已分析 1.1092万个，1253 个无法分析", "它的 1.2342万个合成作业", "还有 1203 个"))])
def test_report_groups_large_counts_as_the_language_writes_them(tmp_path, lang, counts):
    # English with thousands separators; Chinese without one below 10,000 and in 万 from it up (i18n.format_int)
    page = write_report(tmp_path, *_big_fleet(), lang=lang).read_text(encoding="utf-8")
    for text in counts:
        assert text in page
    if lang == "zh":
        body = re.sub(r"<script.*?</script>", " ", page.split("<body>", 1)[1], flags=re.S)
        assert ">=" not in body and "&gt;=" not in body and "S ≥ 1.1" in body


def _summary(lang):
    from types import SimpleNamespace

    from straggle_edu.fleet.cli import summary
    from straggle_edu.i18n import set_language

    figures = {"errors": 1_253, "share_slowed_10pct": 0.43, "analysed": 11_092, "share_slowed_10pct_gpu_hours": 0.41,
               "slowdown_quantiles": {"p50": 1.08, "p90": 1.29, "p99": 1.97, "max": 3.17}, "gpu_hours_lost": 1_696_404.4,
               "gpu_hours": 18_671_872.2, "slowed_jobs": 4_770, "slowed_single_worker": 1_234,
               "share_slowed_single_worker": 1_234 / 4_770, "slowed_single_dp_rank": 56, "share_slowed_single_dp_rank": 56 / 4_770,
               "worst": [{"job_id": "job-0187", "slowdown": 3.169, "gpu_hours_lost": 10_724.2, "analyze": "straggle-edu analyze x"}]}
    run = SimpleNamespace(figures=figures, jobs=12_345, seconds=5.0, analysed=11_092, cached=0, out="out", tables=["t"])
    set_language(lang)
    try:
        return summary(run)
    finally:
        set_language("en")


def test_cli_summary_groups_large_counts_in_english():
    text = _summary("en")
    assert text.startswith("Fleet: 12,345 jobs in 5.0 s (11,092 analysed now, 0 done by an earlier run, 1,253 errors).")
    assert "(S >= 1.1): 43.0% of the 11,092 jobs with a slowdown" in text
    assert "GPU-hours lost to stragglers: 1,696,404, 9.1% of all 18,671,872." in text
    assert "Of the 4,770 slowed jobs, one worker explains most of the excess, step after step, in 1,234 (25.9%)" in text
    assert "job-0187  S = 3.169  10,724 GPU-hours lost" in text


def test_cli_summary_in_chinese_writes_wan_and_the_sign_not_ascii():
    text = _summary("zh")
    assert text.startswith("作业集：1.2345万个作业") and "出错 1253 个" in text
    assert "被拖慢至少 10%（S ≥ 1.1）：在有减速比的 1.1092万个作业中占 43.0%" in text
    assert "掉队者浪费了 169.6万卡时，占全部 1867.2万卡时的 9.1%。" in text
    assert "损失 1.1万卡时" in text
    assert ">=" not in text and not re.search(r"\d,\d{3}", text)
