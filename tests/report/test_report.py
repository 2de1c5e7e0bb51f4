"""The report: content in both formats, escaping, drill-down, plant scores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from snapaudit.errors import InputError
from snapaudit.report import figures
from snapaudit.report.build import write_report
from snapaudit.report.comparison import FILTERS, AnswerGroup, RowFilter, comparison
from snapaudit.report.drilldown import path_letters
from snapaudit.report.html import script_json
from snapaudit.report.load import RunView
from snapaudit.results import RunResults, read_results
from snapaudit.stats.agreement import JudgeAgreement
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.plants import score_plants
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel
from tests.report.conftest import analyzed


def _results(run_dir: Path) -> AnalysisResult:
    return read_results(run_dir / "results.json").analysis


def test_html_and_markdown_state_the_same_headline(run_dir: Path) -> None:
    r = _results(run_dir)
    sem, ex = r.kernels["semantic"], r.kernels["exact"]
    assert r.utility is not None and r.verdict().key == "incompatible"
    paths = write_report(run_dir)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    for text in (f"{sem.d_hat:.2f}", f"[{sem.ci95[0]:.2f}, {sem.ci95[1]:.2f}]",
                 f"{ex.lcb95:.2f}", "INCOMPATIBLE", "Table 1. Locked design",
                 "Table 4. Per-step decomposition", "n0 → n1",
                 f"(change {r.utility.em_delta:.2f} pp)"):
        assert text in html and text in md, text
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_report_is_deterministic(run_dir: Path, tmp_path: Path) -> None:
    first = write_report(run_dir, tmp_path / "a").html.read_bytes()
    assert write_report(run_dir, tmp_path / "b").html.read_bytes() == first


def test_plant_recall_and_precision_in_report(run_dir: Path) -> None:
    md = write_report(run_dir).markdown.read_text()
    plants = json.loads((run_dir / "plants.json").read_text())["questions"]
    flagged = list(_results(run_dir).flips.question_ids)
    assert flagged
    score = score_plants(plants, flagged)
    assert f"({len(score.hits)} of {len(score.planted)} planted flips" in md


def test_score_plants_by_hand() -> None:
    plants = {"a": {"kind": "regression", "expect_flip": True},
              "b": {"kind": "recovery", "expect_flip": True},
              "c": {"kind": "stable", "expect_flip": False},
              "d": {"kind": "distractor", "expect_flip": False}}
    score = score_plants(plants, ["a", "c", "zz"])
    assert score.recall == 0.5 and score.precision == 0.5
    assert score.by_kind["stable"] == (1, 1) and score.by_kind["recovery"] == (0, 1)


def test_script_json_cannot_close_the_script() -> None:
    value = {"a": "</script><!-- <script>&\u2028"}
    text = script_json(value)
    assert "</" not in text and "<!--" not in text and "<" not in text
    assert json.loads(text) == value


def test_hostile_strings_are_escaped_in_both_files(hostile_run: Path) -> None:
    paths = write_report(hostile_run)
    # report.md keeps service text in code spans: rendered, it is escaped text
    rendered = MarkdownIt("commonmark").enable("table").render(paths.markdown.read_text())
    for text in (paths.html.read_text(), rendered):
        assert "<script>document.title" not in text
        assert "<img src=x" not in text
        assert "&lt;script&gt;document.title" in text
    html = paths.html.read_text()
    assert html.count("<script") == 2  # the data island and the page's own script


def test_svg_labels_are_escaped() -> None:
    svg = figures.bars(["<b>x</b>"], [("a&b", [1.0]), ("c", [2.0])], "x", "y", "<t>")
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "a&amp;b" in svg


def _row(q: str, s: str, r: int, a: str, docs: tuple[str, ...]) -> AnswerRow:
    return AnswerRow(q, s, r, a, docs, f"question {q}")


def test_comparison_rows_by_hand() -> None:
    answers = [_row("q1", "n1", 1, "Paris", ("d1", "d2")),
               _row("q1", "n1", 2, "Paris", ("d1", "d2")),
               _row("q1", "n7", 1, "Lyon", ("d2", "d3")),
               _row("q1", "n7", 2, "Lyon", ("d2", "d3")),
               _row("q2", "n1", 1, "Rome", ("d5",)), _row("q2", "n1", 2, "rome", ("d5",)),
               _row("q2", "n7", 1, "Rome", ("d5",)), _row("q2", "n7", 2, "Rome", ("d5",))]
    results = analyzed(answers)  # exact kernel only: no labels, and no gold for the analysis
    assert results.flips.kernel == "exact" and results.flips.question_ids == ("q1",)
    view = RunView(Path("."), RunResults(results), answers, [],
                   gold={"q1": ("Paris",), "q2": ("Rome",)})
    cmp = comparison(view)
    assert [r.id for r in cmp.rows] == ["q1"] and cmp.unchanged == 1  # q2 differs by case
    assert cmp.kernel == "exact kernel (no judge)" and cmp.gold
    row = cmp.rows[0]
    # exact kernel: within 1, cross 0 -> D_1 = 1; contribution = 100 * 1 / 2 questions = 50 pp
    assert row.d_i == 1.0 and row.contribution_pp == 50.0
    assert row.old == (AnswerGroup("Paris", 2, "M"),)  # identical repeats collapsed, counted
    assert row.new == (AnswerGroup("Lyon", 2, "N"),)
    assert set(row.tags) == {"flip", "em", "changed"}
    assert row.verdicts == "old × new: 0/4 same; within old 1/1, within new 1/1 same"
    assert row.evidence == ({"from": "n1", "to": "n7", "entered": ["d3"], "left": ["d1"],
                             "changed": [], "kept": 1},)
    assert row.path == "X→Y"


def test_a_document_whose_text_changed_under_its_id_is_reported_changed() -> None:
    """d2 is kept from n1 to n7 but its content hash differs: changed, not kept; without
    hashes (q2) nothing can be told. The sentence naming gold is marked [C], not [M]."""
    def row(q: str, s: str, r: int, a: str, docs: tuple[str, ...],
            hashes: tuple[str, ...] | None) -> AnswerRow:
        return AnswerRow(q, s, r, a, docs, f"question {q}", doc_hashes=hashes)

    answers = [row("q1", "n1", r, "The capital is Paris.", ("d1", "d2"), ("h1", "h2"))
               for r in (1, 2)]
    answers += [row("q1", "n7", r, "Lyon", ("d2", "d3"), ("h2-new", "h3")) for r in (1, 2)]
    answers += [row("q2", s, r, a, ("d5",), None) for s, a in (("n1", "Rome"), ("n7", "Milan"))
                for r in (1, 2)]
    results = analyzed(answers)
    assert results.overlap is not None
    # q1 keeps d2 with a new text; q2 has no hashes: 1 question of the 1 that can be told
    assert (results.overlap.changed, results.overlap.changed_docs) == (1, 1.0)
    view = RunView(Path("."), RunResults(results), answers, [],
                   gold={"q1": ("Paris",), "q2": ("Rome",)})
    rows = {r.id: r for r in comparison(view).rows}
    assert rows["q1"].evidence == ({"from": "n1", "to": "n7", "entered": ["d3"],
                                    "left": ["d1"], "changed": ["d2"], "kept": 0},)
    assert rows["q2"].evidence[0]["changed"] == [] and rows["q2"].evidence[0]["kept"] == 1
    assert rows["q1"].old == (AnswerGroup("The capital is Paris.", 2, "C"),)
    assert rows["q2"].old == (AnswerGroup("Rome", 2, "M"),)


def test_filters_are_a_list_a_new_one_extends() -> None:
    answers = [_row("q1", s, r, a, ()) for s, a in (("n1", "A"), ("n7", "B")) for r in (1, 2)]
    view = RunView(Path("."), RunResults(analyzed(answers)), answers, [])
    extra = RowFilter("mine", "my filter", lambda ctx: ctx.qid == "q1")
    cmp = comparison(view, [*FILTERS, extra])
    assert cmp.filters[-1] == ("mine", "my filter") and "mine" in cmp.rows[0].tags


def test_semantic_kernel_is_named_and_used() -> None:
    answers = [_row("q1", s, r, a, ()) for s, a in (("n1", "Paris"), ("n7", "paris city"))
               for r in (1, 2)]
    refs = [AnswerRef(s, r) for s in ("n1", "n7") for r in (1, 2)]
    labels = [PairLabel("q1", a, b, True, "rule") for i, a in enumerate(refs)
              for b in refs[i + 1:]]
    results = analyzed(answers, labels)
    assert results.kernels["semantic"].judge == "rule"
    cmp = comparison(RunView(Path("."), RunResults(results), answers, labels))
    assert cmp.kernel == "semantic kernel (judge rule)"
    assert cmp.rows[0].d_i == 0.0 and "changed" not in cmp.rows[0].tags


def test_path_letters_return_to_an_earlier_answer() -> None:
    per_state = {s: [_row("q", s, 1, a, ()), _row("q", s, 2, a, ())]
                 for s, a in (("n1", "A"), ("n3", "B"), ("n7", "A"))}
    assert path_letters(per_state, ["n1", "n3", "n7"], []) == "X→Y→X"


def test_judges_table_by_hand() -> None:
    from snapaudit.report.content import judges_table

    table = judges_table(JudgeAgreement(("rule", "llm"), pairs=10, questions=2,
                                        agreement=90.0, agreement_ci95=(80.0, 100.0),
                                        kappa=0.8, kappa_ci95=None, partitions_identical=50.0,
                                        partitions_identical_ci95=(0.0, 100.0),
                                        d_hat={"rule": 1.0, "llm": None}))
    assert table is not None
    rows = dict(table.rows)
    assert rows["agreement"] == "90.00 [80.00, 100.00]" and rows["Cohen's kappa"] == "0.80 -"
    assert rows["semantic D by llm"] == "-" and judges_table(None) is None


def test_overlap_in_documents_and_beyond_d_section(run_dir: Path) -> None:
    r = _results(run_dir)  # gold and permutations: every secondary part is there
    sec, o = r.secondary, r.overlap
    assert o is not None and o.k == 8 and sec.flip_rates is not None
    assert sec.utility_delta is not None and sec.distribution is not None
    nfr, neg = sec.flip_rates.rates["nfr"], sec.flip_rates.negative_question_ids
    assert nfr.ci95 is not None
    paths = write_report(run_dir)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    for text in (f"{o.mean_docs:.2f} of 8 documents", "Beyond D", "negative flip rate NFR",
                 f"[{nfr.ci95[0]:.2f}, {nfr.ci95[1]:.2f}]",
                 f"Negatively flipped questions (EM-match → EM-nonmatch on a matched repeat): "
                 f"{len(neg)}" + (f": {', '.join(neg)}" if neg else "."), "P(change ≤ 0)",
                 f"{sec.utility_delta['em'].p_nonpositive:.4f}",
                 f"{sec.distribution.kernels['exact'].p_value:.4f}"):
        assert text in html and text in md, text


def test_count_axes_start_at_zero_and_values_are_rounded() -> None:
    svg = figures.bars(["a", "b"], [("questions", [0.0, 45.3125])], "x title", "questions",
                       "t", counts=True)
    ticks = re.findall(r'text-anchor="end">([^<]+)</text>', svg)
    assert ticks[0] == "0" and all(float(t) >= 0 and float(t).is_integer() for t in ticks)
    assert ">45.31<" in svg and "45.3125" not in svg
    assert svg.count('class="axis-label"') == 2 and ">x title<" in svg


def test_coinciding_points_stay_apart_with_distinct_markers() -> None:
    pts = [figures.Point("exact", 1.0, 5.0, 2.0, 8.0), figures.Point("semantic", 1.0, 5.0)]
    svg = figures.scatter(pts, "EM change (pp)", "D (pp)", "t")
    circle = re.search(r'<circle cx="([\d.]+)"', svg)
    square = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="10" height="10" fill="none"', svg)
    assert circle and square
    assert abs((float(square.group(1)) + 5) - float(circle.group(1))) >= 10  # dodged
    assert svg.count('class="legend"') == 1 and ">exact<" in svg and ">semantic<" in svg


def test_report_figures_label_every_axis_and_split_units(run_dir: Path) -> None:
    paths = write_report(run_dir)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    svgs = re.findall(r"<svg.*?</svg>", html)
    assert len(svgs) == 5  # scatter, transitions, overlap, ladder D, ladder flips
    for svg in svgs:
        assert svg.count('class="axis"') == 2 == svg.count('class="axis-label"'), svg[:200]
    assert "pp / questions" not in html
    assert "Strict flips (exact kernel)" not in md  # the flips of the semantic kernel
    assert "Strict flips (semantic kernel)" in md
    assert "[M] the answer matches a gold answer" in md and "[M] the answer matches" in html


def test_small_sample_warning_in_both_files(run_dir: Path) -> None:
    paths = write_report(run_dir)  # 12 questions: far below what the audit's variance needs
    for text in (paths.html.read_text(), paths.markdown.read_text()):
        assert "SMALL SAMPLE: 12 questions" in text and "provisional" in text
        assert "INCOMPATIBLE: every gate rule holds" in text


def test_results_of_schema_1_are_refused_naming_the_version(run_dir: Path) -> None:
    doc = json.loads((run_dir / "results.json").read_text())
    doc["schema_version"] = 1  # as an earlier release wrote it
    (run_dir / "results.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="schema_version 1") as info:
        write_report(run_dir)
    assert str(run_dir / "results.json") in str(info.value)
    assert not (run_dir / "report.html").exists()
