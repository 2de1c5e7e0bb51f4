"""``snapaudit.read_results``: a results document read back into typed results writes itself
again exactly, and one function gives every command's verdict exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import snapaudit
from snapaudit.cli import main
from snapaudit.errors import InputError
from snapaudit.stats.verdict import LABELS, MEANINGS, Verdict, exit_code
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_labels, write_protocol, write_world

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _analyze(out: Path, *extra: str) -> Path:
    main(["analyze", "--answers", str(EXAMPLES / "answers.jsonl"), "--old", "n1", "--new", "n7",
          "--json", str(out), *extra])
    return out


def _assert_round_trip(path: Path) -> snapaudit.RunResults:
    record = snapaudit.read_results(path)
    doc = record.to_json()
    assert doc == json.loads(path.read_text(encoding="utf-8"))
    # as every command writes results.json (snapaudit.results.write_results)
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    assert text + "\n" == path.read_text(encoding="utf-8")
    return record


def test_analyze_of_the_examples_round_trips(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = _analyze(tmp_path / "r.json", "--labels", str(EXAMPLES / "labels.jsonl"),
                    "--gold", str(EXAMPLES / "gold.jsonl"), "--ladder", "n0,n1,n3,n7")
    capsys.readouterr()
    record = _assert_round_trip(path)
    result = record.analysis
    assert set(result.kernels) == {"exact", "semantic"}
    assert result.ladder is not None and result.ladder.states == ("n0", "n1", "n3", "n7")
    assert result.utility is not None and result.secondary.utility_delta is not None
    assert result.transitions is not None and set(result.transitions) == {"semantic", "exact"}
    assert result.secondary.multiplicity is not None
    assert record == snapaudit.RunResults(result)  # an analysis alone: no run sections
    assert result.verdict().key == result.gate.verdict


@pytest.mark.parametrize("extra", [(), ("--gold", str(EXAMPLES / "gold.jsonl")),
                                   ("--permutations", "0")], ids=["bare", "gold", "no-perm"])
def test_results_without_optional_parts_round_trip(tmp_path: Path, extra: tuple[str, ...],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _analyze(tmp_path / "r.json", "--draws", "500", "--permutations", "200", *extra)
    capsys.readouterr()
    result = _assert_round_trip(path).analysis
    assert set(result.kernels) == {"exact"} and result.judges is None
    assert result.ladder is None and result.secondary.multiplicity is None
    if "--gold" in extra:
        assert result.transitions is not None and set(result.transitions) == {"exact"}
    else:
        assert result.utility is None and result.transitions is None
    assert (result.secondary.distribution is None) == ("0" in extra)


def test_results_of_a_run_round_trip_with_usage(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=12)
    write_labels(tmp_path / "labels.jsonl", 12)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=12,
                               judge='kind = "labels"\nname = "primary"\n'
                                     'labels_path = "labels.jsonl"')
        main(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress", "silent"])
    path = tmp_path / "run" / "results.json"
    record = _assert_round_trip(path)
    assert record.usage is not None and record.usage.stages["answer"].attempts == 48
    assert record.analysis.kernels["semantic"].judge == "primary"
    main(["judge-audit", str(tmp_path / "run"), "--judge", "second=rule", "--sample", "6",
          "--progress", "silent"])
    capsys.readouterr()
    audited = _assert_round_trip(path).analysis
    assert audited.judges is not None and audited.judges.judges == ("primary", "second")


def test_a_document_of_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": "1", "gate": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="schema_version '1'"):
        snapaudit.read_results(path)
    path.write_text(json.dumps({"schema_version": "2", "gate": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="not a results document"):
        snapaudit.read_results(path)
    with pytest.raises(InputError, match="not found"):
        snapaudit.read_results(tmp_path / "missing.json")


def test_a_computed_key_that_disagrees_is_named(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _analyze(tmp_path / "r.json", "--draws", "500", "--permutations", "0")
    capsys.readouterr()
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["verdict"]["label"] = "COMPATIBLE"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match="not self-consistent: verdict do not match"):
        snapaudit.read_results(path)


def test_exit_code_is_the_documented_one_for_every_verdict() -> None:
    # README "Commands and exit codes": 4 INCOMPATIBLE, 5 NOT EVALUABLE (with --fail-on)
    codes = {key: exit_code(Verdict(key, LABELS[key], MEANINGS[key])) for key in LABELS}
    assert codes == {"incompatible": 4, "excess_churn_not_shown": 0, "not_evaluable": 5,
                     "compatible": 0, "undecided": 0}
    # --fail-on not-compatible: only COMPATIBLE passes; UNDECIDED has its own code
    required = {key: exit_code(Verdict(key, LABELS[key], MEANINGS[key]), True)
                for key in LABELS}
    assert required == {"incompatible": 4, "excess_churn_not_shown": 7, "not_evaluable": 5,
                        "compatible": 0, "undecided": 7}
    assert exit_code(Verdict("none", "GATE NOT EVALUATED", "the results hold no gate")) == 0
    small = Verdict("incompatible", "INCOMPATIBLE", "m", small_sample="SMALL SAMPLE: 5")
    assert exit_code(small) == 4


def test_a_section_added_within_schema_2_may_be_absent(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = _analyze(tmp_path / "r.json", "--draws", "500", "--permutations", "0")
    capsys.readouterr()
    doc = json.loads(path.read_text(encoding="utf-8"))
    for key in ("sample", "verdict", "multiplicity", "flip_rates", "distribution_test"):
        del doc[key]
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = snapaudit.read_results(path).analysis
    assert result.sample is None and result.secondary.distribution is None
    written = result.to_json()
    assert {k: v for k, v in written.items() if k in doc} == doc and written["sample"] is None


def _without(value: object, keys: set[str]) -> object:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def test_results_of_the_release_before_the_exact_bootstrap_are_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # that release wrote no bootstrap "method" per interval and no comparison.bootstrap
    path = _analyze(tmp_path / "r.json", "--bootstrap", "draws", "--draws", "500",
                    "--permutations", "0")
    capsys.readouterr()
    doc = _without(json.loads(path.read_text(encoding="utf-8")), {"method", "bootstrap"})
    assert isinstance(doc, dict) and "bootstrap" not in doc["comparison"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = snapaudit.read_results(path).analysis
    assert result.comparison.bootstrap == "draws"  # what that release always did
    assert _without(result.to_json(), {"method", "bootstrap"}) == doc
    doc["gate"]["verdict"] = "not " + str(doc["gate"]["verdict"])  # still checked
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match="not self-consistent: gate"):
        snapaudit.read_results(path)
