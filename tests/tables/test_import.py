"""``snapaudit import``: real logs of promptfoo, lm-eval and inspect_ai (examples/import/logs,
written by the tools themselves) import and analyze to the same D as a hand conversion."""

from __future__ import annotations

import importlib.util
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from snapaudit.cli import main
from snapaudit.errors import InputError
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.tables import AnswerRow, read_answers
from snapaudit.tables.foreign import import_logs

LOGS = Path(__file__).resolve().parents[2] / "examples" / "import" / "logs"
PROMPTFOO = LOGS / "promptfoo_repeat2.json"
LMEVAL = sorted(str(p) for p in (LOGS / "lmeval").glob("*/samples_*.jsonl"))
INSPECT = sorted(str(p) for p in (LOGS / "inspect").glob("*.eval"))
HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None


def _d(rows: list[AnswerRow], old: str, new: str) -> float:
    result = analyze(rows, config=AnalysisConfig(old=old, new=new, draws=200, seed=1,
                                                 permutations=0))
    return result.kernels["exact"].d_hat


def _hand_promptfoo() -> list[AnswerRow]:
    results = json.loads(PROMPTFOO.read_text())["results"]["results"]
    count: dict[tuple[str, str], int] = {}
    rows = []
    for r in sorted(results, key=lambda r: r["testIdx"]):
        key = (r["vars"]["id"], r["provider"]["label"])
        count[key] = count.get(key, 0) + 1
        rows.append(AnswerRow(key[0], key[1], count[key], r["response"]["output"]))
    return rows


def _hand_lmeval() -> list[AnswerRow]:
    rows = []
    for path in LMEVAL:
        state = Path(path).parent.name
        for line in Path(path).read_text().splitlines():
            obj = json.loads(line)
            rows += [AnswerRow(str(obj["doc_id"]), state, k + 1, a)
                     for k, a in enumerate(obj["resps"][0])]
    return rows


def _hand_inspect() -> list[AnswerRow]:
    rows = []
    for path in INSPECT:
        with zipfile.ZipFile(path) as z:
            model = json.loads(z.read("header.json"))["eval"]["model"]
            for name in z.namelist():
                if name.startswith("samples/"):
                    s = json.loads(z.read(name))
                    rows.append(AnswerRow(str(s["id"]), model.replace("/", "_"), s["epoch"],
                                          s["output"]["completion"]))
    return rows


def test_promptfoo_import_gives_the_hand_conversions_d() -> None:
    imported = import_logs("promptfoo", [str(PROMPTFOO)])
    rows = list(imported.rows)
    assert {r.state for r in rows} == {"old", "new"} and max(r.repeat for r in rows) == 2
    assert all(r.doc_ids for r in rows)
    assert imported.gold["q1"] == ("Paris",)
    assert _d(rows, "old", "new") == pytest.approx(_d(_hand_promptfoo(), "old", "new"))


def test_lmeval_import_gives_the_hand_conversions_d() -> None:
    imported = import_logs("lm-eval", LMEVAL)
    assert imported.states == {"old": ["model=old"], "new": ["model=new"]}
    assert _d(list(imported.rows), "old", "new") == pytest.approx(
        _d(_hand_lmeval(), "old", "new"))
    source = imported.provenance["sources"][0]
    assert source["tool"] == "lm-eval" and source["tool_version"] == "0.4.13"
    assert source["task"] == "snapqa" and source["calls"] == 12


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai is not installed (the 'inspect' "
                    "extra); its log format is read only through its own reader")
def test_inspect_import_gives_the_hand_conversions_d() -> None:
    imported = import_logs("inspect", INSPECT)
    rows = list(imported.rows)
    assert {r.state for r in rows} == {"seeded_old", "seeded_new"}
    assert all(r.doc_ids for r in rows)
    assert _d(rows, "seeded_old", "seeded_new") == pytest.approx(
        _d(_hand_inspect(), "seeded_old", "seeded_new"))


def test_inspect_without_the_extra_names_it() -> None:
    if HAS_INSPECT:
        pytest.skip("inspect_ai is installed")
    with pytest.raises(Exception, match=r"snapaudit\[inspect\]"):
        import_logs("inspect", INSPECT)


def test_cli_import_then_analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "imp"
    main(["import", "promptfoo", str(PROMPTFOO), "--out", str(out), "--state",
          "before=old", "--state", "after=new", "--analyze", "--old", "before", "--new",
          "after", "--draws", "200"])
    assert "Excess answer churn before -> after" in capsys.readouterr().out
    rows = read_answers(out / "answers.jsonl")
    assert {r.state for r in rows} == {"before", "after"}
    assert (out / "gold.jsonl").exists() and (out / "results.json").exists()
    prov = json.loads((out / "provenance.json").read_text())
    source = prov["sources"][0]
    assert source["sha256"] and source["size"] == PROMPTFOO.stat().st_size
    assert source["tool_version"] and source["errored"] == 0 and source["calls"] == 24
    main(["analyze", "--answers", str(out / "answers.jsonl"), "--old", "before", "--new",
          "after", "--draws", "200"])
    assert "before -> after" in capsys.readouterr().out


def _edited(tmp_path: Path, edit: object) -> Path:
    doc = json.loads(PROMPTFOO.read_text())
    doc["results"]["results"] = edit(doc["results"]["results"])  # type: ignore[operator]
    path = tmp_path / "pf.json"
    path.write_text(json.dumps(doc))
    return path


def _exit(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return int(info.value.code or 0)


def test_errored_call_refused_by_default_then_left_out_explicitly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(results: list[dict[str, object]]) -> list[dict[str, object]]:
        results[3]["error"] = "rate limited"
        return results

    path = _edited(tmp_path, broken)
    assert _exit(["import", "promptfoo", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "pf.json" in err and "results.results[3]" in err and "--allow-errors" in err
    assert "errored: rate limited [" in err and "\n" not in err.strip()
    imported = import_logs("promptfoo", [str(path)], allow_errors=True)
    gone = imported.provenance["excluded_questions"]
    assert len(gone) == 1 and gone[0] not in {r.question_id for r in imported.rows}
    assert imported.provenance["sources"][0]["errored"] == 1


def test_one_repeat_is_refused(tmp_path: Path) -> None:
    path = _edited(tmp_path, lambda rs: [r for r in rs if r["testIdx"] % 2 == 0])
    with pytest.raises(InputError, match="only 1 repeat"):
        import_logs("promptfoo", [str(path)])


def test_ids_that_do_not_match_across_states(tmp_path: Path) -> None:
    path = _edited(tmp_path, lambda rs: [r for r in rs if not (
        r["provider"]["label"] == "new" and r["vars"]["id"] == "q6")])
    with pytest.raises(InputError, match="do not match"):
        import_logs("promptfoo", [str(path)])


def test_mixed_tasks_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "samples_othertask_2026-01-01T00-00-00.000000.jsonl"
    shutil.copy(LMEVAL[0], other)
    with pytest.raises(InputError, match="different tasks"):
        import_logs("lm-eval", [LMEVAL[1], str(other)])


def test_lmeval_duplicate_filter_lines_are_counted(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    lines = Path(LMEVAL[0]).read_text().splitlines()
    twice = [json.dumps({**json.loads(x), "filter": "strict"}) for x in lines]
    path = folder / Path(LMEVAL[0]).name
    path.write_text("\n".join(lines + twice) + "\n")
    source = import_logs("lm-eval", [str(path), LMEVAL[1]],
                         states={str(path): "a", LMEVAL[1]: "b"}).provenance["sources"][0]
    assert source["duplicate_filter_lines"] == 6 and source["calls"] == 12


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai is not installed (the 'inspect' "
                    "extra); its log format is read only through its own reader")
def test_inspect_errored_sample_refused_then_left_out_explicitly() -> None:
    errored = sorted(str(p) for p in (LOGS / "inspect_errored").glob("*.eval"))
    old = [p for p in INSPECT if _model(p) == "seeded/old"]
    with pytest.raises(InputError, match=r"question 'q3' repeat 2 of state '\S+' errored: "):
        import_logs("inspect", old + errored)
    imported = import_logs("inspect", old + errored, allow_errors=True)
    assert imported.provenance["excluded_questions"] == ["q3"]
    assert "q3" not in {r.question_id for r in imported.rows}
    assert [s["errored"] for s in imported.provenance["sources"]] == [0, 1]


def _model(path: str) -> str:
    with zipfile.ZipFile(path) as z:
        return str(json.loads(z.read("header.json"))["eval"]["model"])
