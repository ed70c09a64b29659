"""The README's promises: two commands, the same test command in CI, and
examples that run."""

import doctest
import re
from pathlib import Path

from packaging.specifiers import SpecifierSet

try:
    import tomllib
except ImportError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _bash_blocks(text):
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_readme_begins_with_two_commands():
    before_notebooks = README.split("## ")[0]
    blocks = _bash_blocks(before_notebooks)
    assert len(blocks) == 2
    lab, test = (b.strip() for b in blocks)
    assert "\n" not in lab and "\n" not in test  # one copy-paste line each
    assert lab.startswith("python3 -m venv .venv") and lab.endswith("straggle-edu lab")
    assert test.startswith("python3 -m venv .venv") and "pytest" in test


def test_ci_runs_the_readme_test_command_verbatim():
    test = _bash_blocks(README)[1].strip()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    # verbatim, followed at most by keeping its exit status for the end of the run
    assert any(line == test or re.fullmatch(re.escape(test) + r" \|\| \w+=\$\?", line) for line in ci), test
    assert "-m pytest -m slow" in "\n".join(ci), "CI runs the slow tier after the default one"


def test_readme_examples_run():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(README, {}, "README", "README.md", 0)
    assert test.examples, "the README has runnable examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_readme_links_point_to_files():
    for target in re.findall(r"\]\(((?:notebooks|docs)/[^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_readme_promises_the_python_that_pyproject_requires():
    promised = re.search(r"need only Python (\d+\.\d+) or newer", README)
    assert promised, "the README says which Python the two commands need"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert SpecifierSet(requires) == SpecifierSet(f">={promised[1]}")


def test_ci_installs_the_venv_module_where_debian_leaves_it_out():
    ci = (ROOT / ".ci" / "run").read_text()
    check = ci.index('python3 -c "import ensurepip"')
    assert "apt-get install" in ci[check:] and "python3-venv" in ci[check:]
    assert check < ci.index("python3 -m venv .venv"), "the check must come before the first venv"
    assert "python3-venv" in README


def test_the_chinese_section_has_the_same_two_commands():
    english_lab, english_test = (b.strip() for b in _bash_blocks(README.split("## ")[0]))
    chinese = README.split("## 中文版", 1)[1].split("\n## ", 1)[0]
    lab, test = (b.strip() for b in _bash_blocks(chinese))
    assert lab == english_lab + " --lang zh"
    assert test == english_test
    assert "urlpath=lab/tree/notebooks/zh/00_start_here.ipynb" in chinese


def test_the_tier_table_states_each_tiers_command_and_budget():
    from _tiers import BUDGET_SLACK, SHARES, TIERS

    section = README.split("## Tests and benchmarks", 1)[1].split("\n## ", 1)[0]
    rows = {cells[0]: cells for line in section.splitlines() if line.startswith("| ")
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    assert set(rows) >= set(TIERS), f"the README's tier table lacks {sorted(set(TIERS) - set(rows))}"
    for name, tier in TIERS.items():
        cells = rows[name]
        assert cells[1] == f"`.venv/bin/python -m {tier['command']}`", cells
        assert re.search(rf"about [\d.]+ min \(budget {tier['minutes']:g} min\)", cells[3]), cells
        for part, minutes in SHARES.get(name, {}).items():
            assert part in cells[2] and f"about {minutes:g} min" in cells[2].split(part, 1)[1], (part, cells[2])
    test_command = _bash_blocks(README)[1].strip()
    assert test_command.endswith(".venv/bin/python -m " + TIERS["default"]["command"])
    assert f"more than {BUDGET_SLACK:g} times its budget fails in CI" in section
