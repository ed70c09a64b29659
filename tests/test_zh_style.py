"""The Chinese edition speaks one vocabulary and follows one typography.

What a Chinese reader sees comes from three places: the translations in the
catalogs (``straggle_edu/i18n/zh/*.po``), the markdown of the twins in
``notebooks/zh/``, and ``docs/zh/`` (with the README's 中文版 section).
The vocabulary is the table after ``<!-- terms -->`` in
``docs/zh/glossary.md``: each row's 不写作 column lists, as regular
expressions, the forms the edition does not use (备份 for backup, 任务 for
job, 级 for stage, 工作节点 for worker, ...). A term outside the glossary's
choice fails here, unless its phrase is on the short ``ALLOWED`` list.

The typography checks: no line break in the middle of a sentence (a browser
shows a break between two Chinese characters as a space), no ASCII ``x`` as
a multiplication sign or a multiple, full-width parentheses around Chinese
text, 『』 inside 「」 (and no “ ”), bold rather than italics on Chinese.

Code (spans, blocks, the catalogs' code-like hints are Python and stay as they
are), link targets and math are taken out before a text is read. The words a
formula writes out (``\\text{...}``) are read on their own: in a twin's math they
are Chinese, like the prose around them (``P(\\text{至少一块卡慢})``).

A twin's prose shows no English a reader must read: two or more plain English
words in a row (a button's English name, ``hidden size``) or a ``1 in 100,000``
(十万分之一) fail. Titles and names, an English name in （） after its Chinese
term, and the words the glossary keeps in Latin letters (worker, trace, op,
microbatch, GPU, what-if) pass; what else stays English (a quote of an English
source, a product's name) is on the short ``ENGLISH_ALLOWED`` list.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "notebooks" / "zh"
GLOSSARY = ROOT / "docs" / "zh" / "glossary.md"
CJK = "\u3400-\u9fff"

# Phrases that hold a glossary term's 不写作 form legitimately, each with its reason.
ALLOWED = {
    "独立任务": "task, not job: the restaurant's 独立任务看平均 (the article)",
    "每个任务": "task, not job: 08's workers each run 1,000 tasks",
    "1,000 个任务": "task, not job: the same tasks (08, claim 12)",
    "1000 个任务": "task, not job: the same tasks, as the rule for numbers writes them (08, claim 12)",
    "一组任务": "task: the makespan of a set of tasks",
    "备用任务": "task: MapReduce's backup tasks (07b)",
    "期待的最大值随节点数往上涨": "a verbatim quote of the article (08, claim 4)",
}

# --------------------------------------------------------------------------
# The glossary's table

def terms():
    """Rows of the glossary's term table: (English, choice, [compiled 不写作 patterns])."""
    text = GLOSSARY.read_text(encoding="utf-8")
    assert "<!-- terms -->" in text, f"{GLOSSARY.relative_to(ROOT)} has no <!-- terms --> table"
    rows = []
    for line in text.split("<!-- terms -->", 1)[1].strip().splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        patterns = [re.compile(p.replace("\\|", "|")) for p in re.findall(r"`((?:[^`\\]|\\.)+)`", cells[2])]
        rows.append((cells[0], cells[1], patterns))
    return rows


def _glossary_anchors(path):
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"></a>', text))
    slugs = {re.sub(r"\s+", "-", h.strip().lower()) for h in re.findall(r"^###\s+(.+)$", text, flags=re.M)}
    return ids or slugs


def test_the_glossary_has_every_term_of_the_english_one_under_the_same_anchor():
    english = _glossary_anchors(ROOT / "docs" / "glossary.md")
    chinese = _glossary_anchors(GLOSSARY)
    assert english == chinese, f"only in English: {sorted(english - chinese)}; only in Chinese: {sorted(chinese - english)}"


def test_the_term_table_parses_and_names_the_brief_s_terms():
    rows = terms()
    english = {row[0].split("（")[0] for row in rows}
    for term in ("worker", "job", "backup worker", "trace", "notebook", "microbatch", "fleet", "culprit", "replay",
                 "loss", "rebalance"):
        assert term in english, f"the glossary table has no row for {term!r}"
    assert all(row[2] for row in rows if row[0] in ("job", "backup worker", "trace")), "a term without 不写作 forms"


# --------------------------------------------------------------------------
# What a reader sees

_CODE_BLOCK = re.compile(r"^```.*?^```", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"\]\([^)\s]*\)")
_TAG = re.compile(r"<[^>\n]+>")


def reader_text(markdown):
    """The markdown as a reader reads it: code, math, link targets and HTML tags removed (lines kept)."""
    text = _CODE_BLOCK.sub("", markdown)
    text = _CODE_SPAN.sub("`…`", text)
    text = _MATH.sub("$…$", text)
    text = _LINK.sub("]", text)
    return _TAG.sub("", text)


def zh_cells():
    """(where, markdown) for every markdown cell of the twins."""
    out = []
    for path in sorted(ZH.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                out.append((f"zh/{path.name} cell {i}", cell.source))
    return out


def zh_docs():
    """(where, markdown) for docs/zh (the glossary without its own term table) and the README's 中文版 section."""
    out = []
    for path in sorted((ROOT / "docs" / "zh").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if path == GLOSSARY:
            text = re.sub(r"## 用词约定.*?(?=\n## )", "", text, flags=re.S)
        # the guide's figures table quotes the claim labels as the code writes them (English keys)
        text = re.sub(r"<!-- figures -->\n(?:\|.*\n?)+", "", text)
        out.append((str(path.relative_to(ROOT)), text))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out.append(("README.md 中文版", re.split(r"\n## (?!中文版)", readme.split("\n## 中文版", 1)[1])[0]))
    return out


def msgstrs():
    """(where, translation) for every entry of the zh catalogs."""
    out = []
    for path in sorted((ROOT / "straggle_edu" / "i18n" / "zh").glob("*.po")):
        with open(path, "rb") as fh:
            for message in read_po(fh, locale="zh_Hans_CN"):
                if message.id:
                    strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
                    msgid = message.id if isinstance(message.id, str) else message.id[0]
                    out.extend((f"{path.name}: {msgid!r}", s) for s in strings if s)
    return out


def off_glossary(text):
    """The 不写作 forms in ``text`` (a reader's text), after the ALLOWED phrases are taken out."""
    for phrase in ALLOWED:
        text = text.replace(phrase, "")
    spans = sorted({(m.start(), -m.end(), m.group(0)) for _, _, patterns in terms() for p in patterns
                    for m in p.finditer(text)})
    kept, end = [], -1
    for start, neg_end, term in spans:  # a match inside a longer one (一级 in 最后一级) counts once
        if -neg_end > end:
            kept.append(term)
            end = -neg_end
    return kept


_FULL_STOP = "。！？"
_WRAP = re.compile(rf"[{CJK}，、：；（“「『]\n[ \t]*(?:>[ \t]*)*[{CJK}（「『]")
_X = re.compile(rf"(?<=[\d}}）){CJK}]) ?x(?![A-Za-z_])")
_HALF_AFTER_CJK = re.compile(rf"[{CJK}] ?\(([^()\n]*)\)")
_HALF_AROUND_CJK = re.compile(rf"(?<![A-Za-z0-9_\]\)])\(([^()\n]*[{CJK}][^()\n]*)\)")
_FORMULA = re.compile(r"[+\-−×/=<>\[\]^*|√]")  # a parenthesis in a formula stays half-width: (1 + 3.63 × 抖动)


def wraps(text):
    """Line breaks inside a sentence of a reader's text (a heading, table row or list item starts afresh)."""
    return [m.group(0).replace("\n", "⏎") for m in _WRAP.finditer(text)
            if not text[:m.start()].rsplit("\n", 1)[-1].lstrip().startswith(("#", "|"))]


def typography(text, markdown=True):
    """The typographic slips in a reader's text: [(kind, excerpt)]."""
    found = [("mid-sentence line break", w) for w in wraps(text)] if markdown else []
    found += [("ASCII x for × or 倍", text[max(m.start() - 8, 0):m.end() + 4]) for m in _X.finditer(text)]
    found += [("half-width parenthesis", m.group(0)) for m in _HALF_AFTER_CJK.finditer(text)
              if not _FORMULA.search(m.group(1))]
    found += [("half-width parentheses around Chinese", m.group(0)) for m in _HALF_AROUND_CJK.finditer(text)
              if not _FORMULA.search(m.group(1))]
    found += [("“ ” instead of 「」", q) for q in re.findall(r"[“”]", text)]
    depth = 0
    for ch in text:
        depth += ch == "「"
        if ch == "「" and depth > 1:
            found.append(("「 inside 「」 (use 『』)", text[:40]))
        depth -= ch == "」" and depth > 0
    return found


def _italic_cjk(markdown):
    import mistune

    html = mistune.create_markdown()(_CODE_BLOCK.sub("", markdown))
    return [em for em in re.findall(r"<em>(.*?)</em>", html, flags=re.S) if re.search(f"[{CJK}]", em)]


def test_reader_text_takes_out_code_links_and_math():
    text = reader_text("见[备份](../glossary.md#backup-workers)，`notebook = 1`，$\\text{x}$\n```\n任务\n```")
    assert "备份" in text and "glossary" not in text and "notebook" not in text and "任务" not in text


def test_off_glossary_sees_each_choice_and_allows_the_listed_phrases():
    assert off_glossary("备份节点数 b") == ["备份", "节点"]
    assert off_glossary("这个任务跑了 10 天；最后一级最慢；4096 张卡；轨迹") == ["任务", "最后一级", "张卡", "轨迹"]
    assert off_glossary("独立任务看平均，同步时间；每步时间；stage_imbalance(...)；layers_per_stage") == []
    assert off_glossary("最后一个 stage 的步时") == ["stage", "步时"]



def test_off_glossary_sees_the_review_s_shifted_words_and_spares_their_right_uses():
    # reader-zh.md: framing 算法, mark level 标记水平, DP split 动态规划切分 and 线性划分 DP, 评测, 下一个实验
    assert off_glossary("按计划算法，天数的算法；标记水平；动态规划切分；线性划分 DP；DP 切分；评测；下一个实验") == [
        "计划算法", "天数的算法", "标记水平", "动态规划切分", "线性划分 DP", "DP 切分", "评测", "下一个实验"]
    assert off_glossary("计划口径；算法之间的差别；是算法问题；标记线；线性划分（动态规划）；DP rank 1；评估、下一轮实验") == []

def test_off_glossary_holds_one_word_per_concept_for_fleet_culprit_replay_loss_rebalance():
    # the zh review (2026-12-05) T1-T5, issue 26 §7: 作业集 (集群 only for machines), 罪魁, 重放, loss, 重平衡
    assert off_glossary("一个演示集群；元凶；罪魁祸首；回放校验；测试损失；目标损失；梯度相同时最大的损失差距；重新均衡；重新分配负载") == [
        "演示集群", "元凶", "罪魁祸首", "回放", "测试损失", "目标损失", "损失差距", "重新均衡", "重新分配负载"]
    assert off_glossary("演示作业集；Dask 集群；头号罪魁；理想重放；测试 loss；训练损失；损失的卡时、损失比例；重平衡") == []
    assert off_glossary("流水线的最后一个阶段要算损失和输出层；sync：60 s 时的损失；损失 <b>{loss:.2e}</b>") == [
        "算损失", "时的损失", "损失 <b>{loss"]


def test_typography_sees_each_slip():
    kinds = {kind for kind, _ in typography("这一步\n等得最少，\n所以 2x 快，8 x 200 份，停顿 (s)，看(每份报告)，“探索器”，「「a」」")}
    assert kinds == {"mid-sentence line break", "ASCII x for × or 倍", "half-width parenthesis",
                     "half-width parentheses around Chinese", "“ ” instead of 「」", "「 inside 「」 (use 『』)"}
    assert typography("一句话。\n下一句。\n\n## 标题\n正文，P(至少一块卡慢)，1.5 倍，8 × 200，「外『内』外」，(1 + 3.63 × 抖动)") == []
    assert _italic_cjk("*先猜一猜：* 多少？") and not _italic_cjk("**先猜一猜**：*Run → Run All*")


def test_catalog_translations_use_the_glossary_and_its_typography():
    bad = []
    for where, text in msgstrs():
        bad += [f"{where}: {term!r} in {text!r}" for term in off_glossary(text)]
        bad += [f"{where}: {kind}: {excerpt!r}" for kind, excerpt in typography(text, markdown=False)]
    assert not bad, f"{len(bad)} slip(s) in the zh catalogs (docs/zh/glossary.md):\n" + "\n".join(bad[:80])


def _collected(sources):
    bad = []
    for where, markdown in sources:
        text = reader_text(markdown)
        bad += [f"{where}: {term!r}" for term in off_glossary(text)]
        bad += [f"{where}: {kind}: {excerpt!r}" for kind, excerpt in typography(text)]
        bad += [f"{where}: italics on Chinese: {em!r}" for em in _italic_cjk(markdown)]
    return bad


def test_zh_twins_use_the_glossary_and_its_typography():
    bad = _collected(zh_cells())
    assert not bad, f"{len(bad)} slip(s) in the zh twins (docs/zh/glossary.md):\n" + "\n".join(bad[:80])


def test_zh_docs_and_the_readme_use_the_glossary_and_its_typography():
    bad = _collected(zh_docs())
    assert not bad, f"{len(bad)} slip(s) in docs/zh and the README's 中文版:\n" + "\n".join(bad[:80])


def test_zh_twins_link_the_chinese_glossary_with_anchors_it_has():
    anchors = _glossary_anchors(GLOSSARY)
    bad = []
    for where, markdown in zh_cells():
        for target, anchor in re.findall(r"\]\(([^)#\s]*glossary\.md)(?:#([^)\s]*))?\)", markdown):
            if not target.endswith("docs/zh/glossary.md"):
                bad.append(f"{where}: links {target} (the Chinese glossary is ../../docs/zh/glossary.md)")
            elif anchor and anchor not in anchors:
                bad.append(f"{where}: #{anchor} is not an anchor of docs/zh/glossary.md")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------
# The words inside a formula (reader_text() takes the math out, so they are read here)

_TEXT_IN_MATH = re.compile(r"\\(?:text|textrm|textit|textbf|textsf|mbox)\s*\{([^{}]*)\}")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]")
MATH_UNITS = {"ms", "us", "ns"}  # a unit after a number stays as it is: 40\,\text{ms}


def latin_words_in_math(markdown):
    """English words in the ``\\text{...}`` of a markdown's math: [word].

    A word the glossary keeps in Latin letters (worker, trace, op, GPU, ...), an
    abbreviation in capitals (DP, CDF) and a unit are not English prose and pass.
    """
    kept = {w for _, choice, _ in terms() for w in _LATIN_WORD.findall(choice)} | MATH_UNITS
    words = []
    for math in _MATH.findall(_CODE_SPAN.sub("`…`", _CODE_BLOCK.sub("", markdown))):
        for text in _TEXT_IN_MATH.findall(math):
            words += [w for w in _LATIN_WORD.findall(text) if w not in kept and not w.isupper()]
    return words


def test_latin_words_in_math_sees_english_in_text_and_spares_the_glossary_s_latin():
    assert latin_words_in_math(r"$$\text{score}_i = \frac{\min_j \text{median}_j}{x}$$") == ["score", "median"]
    assert latin_words_in_math(r"$P(\text{some worker slow})$") == ["some", "slow"]
    assert latin_words_in_math(r"$P(\text{至少一个 worker 慢})$，$\text{GPU}$，$40\,\text{ms}$，`$\text{no}$`") == []
    assert latin_words_in_math(r"不在公式里：\text{score}") == []


def test_zh_twins_write_the_words_of_their_formulas_in_chinese():
    bad = [f"{where}: {word!r} in a formula's \\text{{...}}" for where, markdown in zh_cells()
           for word in latin_words_in_math(markdown)]
    assert not bad, f"{len(bad)} English word(s) in the zh twins' math (write them in Chinese):\n" + "\n".join(bad)


# --------------------------------------------------------------------------
# English a reader of a twin sees in its prose

_EN_TOKEN = r"(?:[A-Za-z][A-Za-z'’]*(?:-[A-Za-z]+)*|\d[\d,.]*%?)"
_EN_RUN = re.compile(rf"{_EN_TOKEN}(?:(?:[ -]|, )+{_EN_TOKEN})+")
_ONE_IN_N = re.compile(r"\d[ -](?:in|of|per|out of)[ -]\d")  # 1 in 100,000, 1-in-100: write 十万分之一, 百分之一
_GLOSS = re.compile(rf"(?<=[{CJK}])（[A-Za-z][^（）{CJK}]*）")  # 对冲请求（hedged request）: a term and its English name
# Small words a title or a name holds in lower case: The Tail at Scale, Lin et al., Render as Reveal Slideshow.
_TITLE_SMALL = {"a", "an", "the", "of", "in", "on", "at", "as", "for", "and", "to", "with", "by", "et", "al"}

# English that stays English in a twin's prose, each with its reason (a title in Title Case, a name, a
# gloss in （） after its Chinese term, code and math need no entry).
ENGLISH_ALLOWED = {
    "PyTorch profiler": "a tool's name (09b)",
}


def english_in_prose(text):
    """The English a Chinese reader meets in ``text`` (a reader's text): [run].

    A run of two or more plain English words, or a '1 in N' (十万分之一 in Chinese). Not plain: the
    words the glossary keeps in Latin letters (worker, trace, op, microbatch, GPU, what-if), an
    abbreviation in capitals (DP, SGD), a symbol of one letter (p, n, S). Not a slip: a title or a name
    (every word capitalized but the small ones: The Tail at Scale, Lin et al., Jeff Dean), an English
    name in （） after its Chinese term, and the phrases of ``ENGLISH_ALLOWED``.
    """
    kept = {w.lower() for _, choice, _ in terms() for w in _LATIN_WORD.findall(choice)}
    text = _GLOSS.sub("（…）", text)
    for phrase in ENGLISH_ALLOWED:
        text = text.replace(phrase, "…")
    found = []
    for m in _EN_RUN.finditer(text):
        words = [w for w in re.findall(_EN_TOKEN, m.group(0)) if w[0].isalpha()]
        plain = [w for w in words if len(w) > 1 and not w.isupper() and w.lower() not in kept]
        title = any(re.match(r"[A-Z][a-z]", w) for w in words) and all(
            w[0].isupper() or w in _TITLE_SMALL for w in words)
        if (len(plain) >= 2 or _ONE_IN_N.search(m.group(0))) and not title:
            found.append(m.group(0))
    return found


def test_english_in_prose_sees_english_and_spares_titles_names_glosses_and_the_glossary_s_latin():
    assert english_in_prose("多按几次 *new random draw*。") == ["new random draw"]
    assert english_in_prose("把 p 设成 1 in 100,000；1-in-100 的尾部") == ["1 in 100,000", "1-in-100"]
    assert english_in_prose("**cited（引用）**、**≈ …，calibrated to（校准到）**") == ["calibrated to"]
    assert english_in_prose("在运行中的 Jupyter kernel 里") == ["Jupyter kernel"]
    assert english_in_prose("8 个 worker 的 trace，DP rank 1，what-if 分析，local SGD，p = 1%，n = 100") == []
    assert english_in_prose("「The Tail at Scale」；Lin et al.，Jeff Dean；*Run → Run All Cells*") == []
    assert english_in_prose("对冲请求（hedged request）；PyTorch profiler 的 trace") == []


def test_zh_twins_prose_has_no_english_a_reader_must_read():
    bad = [f"{where}: {run!r}" for where, markdown in zh_cells() for run in english_in_prose(reader_text(markdown))]
    assert not bad, (f"{len(bad)} English run(s) in the zh twins' prose (write them in Chinese, in the glossary's "
                     "words; a title, a name or a quote that stays English goes in ENGLISH_ALLOWED):\n" + "\n".join(bad))


def test_every_english_allowed_phrase_is_still_in_a_twin():
    texts = [reader_text(markdown) for _, markdown in zh_cells()]
    stale = [phrase for phrase in ENGLISH_ALLOWED if not any(phrase in text for text in texts)]
    assert not stale, f"ENGLISH_ALLOWED phrases no twin holds any more (take them out): {stale}"


# --------------------------------------------------------------------------
# Numbers (README, 中文版): no thousands separator below 10,000 (4096, not 4,096); 万 (or 亿) from 10,000 up,
# the exact figure allowed in full-width parentheses right after its 万 form: 98.3万（983,040）, 19.66万美元（196,608 美元）

_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])")
_LONG = re.compile(r"(?<![\w.,/\\-])\d{5,}(?:\.\d+)?(?![\w,/\\-]|\.\d)(?!\s*[*/×+−^])")  # not an operand: 151936 / 2048
_EXACT_AFTER_WAN = re.compile(r"\d[万亿][^（）\n]{0,8}（$")


def number_slips(text):
    """The numbers of a reader's text that break the Chinese rule for numbers: [(number, why)].

    Examples
    --------
    >>> number_slips("4,096 块卡；983,040 卡时；20000 步")
    [('4,096', 'a separator below 10,000'), ('983,040', 'not in 万'), ('20000', 'not in 万')]
    >>> number_slips("4096 块卡；98.3万卡时（983,040）；19.66万美元（196,608 美元）；第 3 步；1e-20；trace-job-00037；151936 / 2048")
    []
    """
    found = []
    for m in _GROUPED.finditer(text):
        if float(m.group(0).replace(",", "")) < 10_000:
            found.append((m.group(0), "a separator below 10,000"))
        elif not _EXACT_AFTER_WAN.search(text[:m.start()]):
            found.append((m.group(0), "not in 万"))
    found += [(m.group(0), "not in 万") for m in _LONG.finditer(text)]
    return sorted(found, key=lambda f: text.find(f[0]))



def catalog_prose(text):
    r"""A translation without its Python: the comment of a line of code, a line of prose whole.

    Exercise hints and solutions are code a learner types (``1024 * 48 * (1 - 1 / 1.25)  # 9830.4 卡时``); the
    rule for numbers holds for what a reader reads, the comment, not for the literals.

    Examples
    --------
    >>> catalog_prose("output_layer_cost(2048, 151936, 4096)  # 151936 / (12 * 2048)\nt = 1\n只有 1000 块卡")
    ' 151936 / (12 * 2048)\n只有 1000 块卡'
    """
    import ast

    kept = []
    for line in text.split("\n"):
        code, hash_, comment = line.partition("#")
        try:
            ast.parse(code.strip() or "None")
        except SyntaxError:
            kept.append(line)
            continue
        if hash_:
            kept.append(comment)
    return "\n".join(kept)


_ASCII_COMPARE = re.compile(r"(?<=\s)(?:>=|<=)(?=\s)")
_ASCII_MINUS = re.compile(r"(?<=[\w)]) - (?=[\w(])")


def math_slips(text):
    """ASCII ``>=``, ``<=`` and a hyphen for a minus in a reader's text: write ≥, ≤, − (S ≥ 1.1, 1 − 1/S).

    Examples
    --------
    >>> math_slips("S >= 1.1，浪费 1 - 1/S，backup - sync"), math_slips("S ≥ 1.1，1 − 1/S，osdi-ST，1e-20")
    (['>=', ' - ', ' - '], [])
    """
    return [m.group(0) for m in _ASCII_COMPARE.finditer(text)] + [m.group(0) for m in _ASCII_MINUS.finditer(text)]


def test_catalog_translations_follow_the_rule_for_numbers_and_math_signs():
    bad = []
    for where, text in msgstrs():
        prose = catalog_prose(_CODE_SPAN.sub("`…`", text))
        bad += [f"{where}: {number!r}: {why}" for number, why in number_slips(prose)]
        if not where.startswith("exercises.po"):  # hints write Python a learner types: 1 - (1 - p)**n >= 0.5
            bad += [f"{where}: {sign!r} (write ≥, ≤, −)" for sign in math_slips(prose)]
    assert not bad, f"{len(bad)} slip(s) in the zh catalogs (README 中文版: 4096, 98.3万; ≥, −):\n" + "\n".join(bad[:80])


def test_zh_twins_follow_the_rule_for_numbers():
    bad = [f"{where}: {number!r}: {why}" for where, markdown in zh_cells()
           for number, why in number_slips(reader_text(markdown))]
    assert not bad, (f"{len(bad)} number(s) in the zh twins against the rule (4096 without a separator, 万 from "
                     "10,000 up; /work/tools/zh_words.py fixes them):\n" + "\n".join(bad[:80]))


def test_zh_docs_and_the_readme_follow_the_rule_for_numbers():
    bad = [f"{where}: {number!r}: {why}" for where, markdown in zh_docs()
           for number, why in number_slips(reader_text(markdown))]
    assert not bad, f"{len(bad)} number(s) in docs/zh and the README's 中文版 against the rule:\n" + "\n".join(bad[:80])


# --------------------------------------------------------------------------
# One paragraph per line (the glossary's typography): a browser shows a line break inside a Chinese paragraph as a
# space, so a break after a sentence (「。⏎下一句」) is one too.

_SENTENCE_BREAK = re.compile(rf"[。！？](?:[」』）)]|\*\*)*\n[ \t]*(?:>[ \t]*)?(?=[{CJK}「『（*A-Za-z0-9`$\[])")
_STARTS_BLOCK = re.compile(r"^\s*(?:>\s*)?(?:[-*+]\s|\d+[.)]\s|#|\||<|```|\$\$)")


def sentence_breaks(markdown):
    """The line breaks after a sentence inside a paragraph of ``markdown``: [excerpt].

    A break before a list item, a heading, a table row, a tag, a code block or display math starts a new
    block, not a new sentence of the same paragraph; a line that ends in two spaces asks for the break.

    Examples
    --------
    >>> sentence_breaks("同步的一步，要等最慢的卡。\\n所以一步的耗时是最大值。\\n\\n- 一条。\\n- 两条。\\n> 引文。\\n> 接着。")
    ['卡。⏎所以', '文。⏎> 接着']
    >>> sentence_breaks("一段话写成一行。\\n\\n下一段。\\n## 标题\\n```\\n代码。\\n```")
    []
    """
    found = []
    for m in _SENTENCE_BREAK.finditer(markdown):
        line_start = markdown.rfind("\n", 0, m.start()) + 1
        prev = markdown[line_start:m.end()].split("\n")[0]
        nxt = markdown[m.end() - len(m.group(0).split("\n")[1]):].split("\n")[0]
        if prev.endswith("  ") or _STARTS_BLOCK.match(nxt) or prev.lstrip().startswith(("#", "|", "<")):
            continue
        if prev.lstrip().startswith(">") != nxt.lstrip().startswith(">"):
            continue
        found.append(markdown[m.start() - 1:m.end() + 2].replace("\n", "⏎"))
    return found


def test_zh_twins_write_one_paragraph_a_line():
    bad = [f"{where}: {excerpt!r}" for where, markdown in zh_cells()
           for excerpt in sentence_breaks(_CODE_BLOCK.sub("", markdown))]
    assert not bad, (f"{len(bad)} line break(s) inside a paragraph of the zh twins (a browser shows them as spaces; "
                     "/work/tools/zh_words.py joins them):\n" + "\n".join(bad[:80]))
