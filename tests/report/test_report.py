"""The report: content in both formats, escaping, drill-down, plant scores."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_it import MarkdownIt

from snapaudit.report import figures
from snapaudit.report.build import write_report
from snapaudit.report.drilldown import drilldown_rows, path_letters
from snapaudit.report.html import script_json
from snapaudit.report.load import RunView
from snapaudit.stats.plants import score_plants
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel


def test_html_and_markdown_state_the_same_headline(run_dir: Path) -> None:
    paths = write_report(run_dir)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    for text in ("18.75", "[5.00, 31.25]", "20.00", "INCOMPATIBLE", "Table 1. Locked design",
                 "Table 4. Per-step decomposition", "n0 → n1", "4.17 pp"):
        assert text in html and text in md, text
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_report_is_deterministic(run_dir: Path, tmp_path: Path) -> None:
    first = write_report(run_dir, tmp_path / "a").html.read_bytes()
    assert write_report(run_dir, tmp_path / "b").html.read_bytes() == first


def test_plant_recall_and_precision_in_report(run_dir: Path) -> None:
    md = write_report(run_dir).markdown.read_text()
    plants = json.loads((run_dir / "plants.json").read_text())["questions"]
    flagged = ["q002", "q005", "q009"]
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
    svg = figures.bars(["<b>x</b>"], [("a&b", [1.0])], "y", "<t>")
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "a&amp;b" in svg


def _row(q: str, s: str, r: int, a: str, docs: tuple[str, ...]) -> AnswerRow:
    return AnswerRow(q, s, r, a, docs, f"question {q}")


def test_drilldown_by_hand() -> None:
    answers = [_row("q1", "n1", 1, "Paris", ("d1", "d2")),
               _row("q1", "n1", 2, "Paris", ("d1", "d2")),
               _row("q1", "n7", 1, "Lyon", ("d2", "d3")),
               _row("q1", "n7", 2, "Lyon", ("d2", "d3")),
               _row("q2", "n1", 1, "Rome", ("d5",)), _row("q2", "n1", 2, "rome", ("d5",)),
               _row("q2", "n7", 1, "Rome", ("d5",)), _row("q2", "n7", 2, "Rome", ("d5",))]
    labels = [PairLabel("q1", AnswerRef("n1", 1), AnswerRef("n7", 1), False, "rule")]
    view = RunView(Path("."), {"flips": {"question_ids": ["q1"]}}, answers, labels,
                   gold={"q1": ("Paris",), "q2": ("Rome",)})
    rows = drilldown_rows(view)
    assert [r["id"] for r in rows] == ["q1"]  # q2 differs only by case
    row = rows[0]
    assert row["flip"] and row["path"] == "X→Y"
    assert row["answers"]["n7"] == [["Lyon", "N"], ["Lyon", "N"]]
    assert row["answers"]["n1"][0] == ["Paris", "M"]
    assert row["evidence"] == [{"from": "n1", "to": "n7", "entered": ["d3"], "left": ["d1"]}]
    assert row["different"] == ["n1/1 ≠ n7/1 (rule)"]


def test_path_letters_return_to_an_earlier_answer() -> None:
    per_state = {s: [_row("q", s, 1, a, ()), _row("q", s, 2, a, ())]
                 for s, a in (("n1", "A"), ("n3", "B"), ("n7", "A"))}
    assert path_letters(per_state, ["n1", "n3", "n7"], []) == "X→Y→X"


def test_judges_table_by_hand() -> None:
    from snapaudit.report.content import judges_table

    table = judges_table({"judges": {"judges": ["rule", "llm"], "pairs": 10, "questions": 2,
                                     "agreement": 90.0, "agreement_ci95": [80.0, 100.0],
                                     "kappa": 0.8, "kappa_ci95": None,
                                     "partitions_identical": 50.0,
                                     "partitions_identical_ci95": [0.0, 100.0],
                                     "d_hat": {"rule": 1.0, "llm": None}}})
    assert table is not None
    rows = dict(table.rows)
    assert rows["agreement"] == "90.00 [80.00, 100.00]" and rows["Cohen's kappa"] == "0.80 -"
    assert rows["semantic D by llm"] == "-" and judges_table({"judges": None}) is None


def test_overlap_in_documents_and_beyond_d_section(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    results["overlap"].update(k=8, mean_docs=1.19)
    results["flip_rates"] = {
        "nfr": {"point": 8.33, "ci95": [4.0, 12.5]}, "pfr": {"point": 12.5, "ci95": [6.0, 20.0]},
        "nfi": {"point": 22.2, "ci95": [10.0, 35.0]}, "btc": {"point": 85.7, "ci95": [70.0, 95.0]},
        "bec": {"point": 77.8, "ci95": [65.0, 90.0]}, "comparisons": 24,
        "negative_question_ids": ["q003", "q007"]}
    results["utility"]["delta"] = {"em": {"point": 4.17, "ci95": [-8.33, 16.67],
                                          "p_nonpositive": 0.3412},
                                   "f1": {"point": 4.0, "ci95": [-6.5, 15.0],
                                          "p_nonpositive": 0.3}}
    results["distribution_test"] = {"permutations": 10000,
                                    "exact": {"mmd2": 0.4, "p_value": 0.0021}}
    (run_dir / "results.json").write_text(json.dumps(results))
    paths = write_report(run_dir)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    for text in ("1.19 of 8 documents", "Beyond D", "negative flip rate NFR", "[4.00, 12.50]",
                 "q003, q007", "P(change ≤ 0)", "0.3412", "0.0021"):
        assert text in html and text in md, text
