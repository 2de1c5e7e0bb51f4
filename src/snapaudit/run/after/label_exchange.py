"""Blind pair labels through Label Studio or Argilla: tasks out, finished annotations back.

:func:`export_tasks` writes the label sample of :class:`~snapaudit.run.after.review.ReviewSession`
as pairwise "same answer?" tasks: one task per pair of blind items of a question, holding the
question, the two answers (``answer_a``, ``answer_b``), the question id, the pair (``A|B``)
and the sample size; never the state, evidence, gold or a judge's labels.

* ``labelstudio``: a JSON list of tasks ``{"data": {...}}`` (Label Studio's import format)
  and, next to it, ``<out stem>.labeling.xml``, the labeling config (a ``Choices`` control
  named ``label`` with the choices ``same``, ``different``, ``unsure``).
* ``argilla``: JSONL records ``{"id", "fields": {"question", "answer_a", "answer_b"},
  "metadata": {"question_id", "pair", "sample"}}`` and ``<out stem>.settings.json`` (the three
  text fields and the label question ``label``).

:func:`import_annotations` reads the tool's export of the finished tasks: Label Studio's
JSON (``annotations[].result[].value.choices``, or the JSON-MIN form with a top-level
``label``) or Argilla's records (``responses.label[].value``, or the flattened
``label.responses``), and saves every question's labels as the judge ``human:NAME`` through
the review session (the ledger path of every human label), then locks them. A pair not in
the sample, a question with a pair missing, a pair given twice or a task without exactly
one answer is a ConfigError naming the task (its line for JSONL, its index for JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from snapaudit import atomic
from snapaudit.errors import ConfigError
from snapaudit.run.after.review import ReviewSession
from snapaudit.run.analysis.locked_run import LockedRun
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.human import LABELS, Label

Format = Literal["labelstudio", "argilla"]
HEADER = "Do the two answers give the same answer to the question?"
LABELING_XML = f"""<View>
  <Header value="{HEADER}"/>
  <Text name="question" value="$question"/>
  <Text name="answer_a" value="$answer_a"/>
  <Text name="answer_b" value="$answer_b"/>
  <Choices name="label" toName="answer_a" choice="single" required="true">
    <Choice value="same"/>
    <Choice value="different"/>
    <Choice value="unsure"/>
  </Choices>
</View>
"""
ARGILLA_SETTINGS = {
    "guidelines": HEADER,
    "fields": [{"name": n, "type": "text", "required": True}
               for n in ("question", "answer_a", "answer_b")],
    "questions": [{"name": "label", "type": "label_selection", "title": HEADER,
                   "labels": list(LABELS), "required": True}],
    "metadata": [{"name": "question_id", "type": "terms"}, {"name": "pair", "type": "terms"},
                 {"name": "sample", "type": "integer"}],
}


def _tasks(run_dir: Path, sample: int | None) -> Iterator[dict[str, Any]]:
    with RunDir(run_dir, read_only=True) as rd:
        run = LockedRun.load(rd)
        chosen = run.sample(sample)
        for qid in chosen:
            answers, pairs = run.blind(qid)
            text = {a.item: a.text for a in answers}
            for pair in pairs:
                x, _, y = pair.partition("|")
                yield {"question_id": qid, "pair": pair, "sample": len(chosen),
                       "question": run.questions.get(qid, ""), "answer_a": text[x],
                       "answer_b": text[y]}


def export_tasks(run_dir: Path, fmt: Format, out: Path, *, sample: int | None = None) -> int:
    """Write the sample's pair tasks to ``out`` (and the tool's config next to it); returns
    the number of tasks."""
    tasks = list(_tasks(run_dir, sample))
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "labelstudio":
        atomic.write_text(out, json.dumps([{"data": t} for t in tasks], indent=1,
                                          ensure_ascii=False) + "\n")
        atomic.write_text(out.with_name(out.stem + ".labeling.xml"), LABELING_XML)
    elif fmt == "argilla":
        lines = [json.dumps({"id": f"{t['question_id']}|{t['pair']}",
                             "fields": {k: t[k] for k in ("question", "answer_a", "answer_b")},
                             "metadata": {k: t[k] for k in ("question_id", "pair", "sample")}},
                            ensure_ascii=False) for t in tasks]
        atomic.write_text(out, "".join(line + "\n" for line in lines))
        atomic.write_text(out.with_name(out.stem + ".settings.json"),
                          json.dumps(ARGILLA_SETTINGS, indent=1) + "\n")
    else:
        raise ConfigError(f"unknown export format {fmt!r}: labelstudio or argilla")
    return len(tasks)


# ---------------------------------------------------------------- import


def _records(file: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, record)`` of a JSON list (``task N``) or of JSONL (``line N``)."""
    text = file.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{file}: not valid JSON ({exc})") from None
        return [(f"task {i}", r) for i, r in enumerate(data, start=1)]
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((f"line {n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{file} line {n}: not valid JSON ({exc.msg})") from None
    return out


def _one(values: list[Any], where: str) -> str:
    if len(values) != 1:
        raise ConfigError(f"{where}: expected exactly one finished answer, found "
                          f"{len(values)}")
    value = values[0]
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value not in LABELS:
        raise ConfigError(f"{where}: label {value!r} is not one of same, different, unsure")
    return str(value)


def _labelstudio(rec: dict[str, Any], where: str) -> tuple[dict[str, Any], str]:
    if "data" not in rec:  # JSON-MIN: the task's data and the choice side by side
        return rec, _one([rec["label"]] if "label" in rec else [], where)
    done = [a for a in rec.get("annotations", []) if not a.get("was_cancelled")]
    values = [r["value"]["choices"] for a in done for r in a.get("result", [])
              if r.get("from_name") == "label" and "choices" in r.get("value", {})]
    return rec["data"], _one(values, where)


def _argilla(rec: dict[str, Any], where: str) -> tuple[dict[str, Any], str]:
    meta = rec.get("metadata") or {}
    if "label.responses" in rec:  # the flattened export
        status = rec.get("label.responses.status") or ["submitted"] * len(
            rec["label.responses"])
        values = [v for v, s in zip(rec["label.responses"], status, strict=False)
                  if s == "submitted"]
    else:
        values = [r["value"] for r in (rec.get("responses") or {}).get("label", [])
                  if r.get("status", "submitted") == "submitted"]
    return meta, _one(values, where)


def read_annotations(file: Path) -> tuple[int | None, dict[str, dict[str, tuple[str, str]]]]:
    """The sample size the tasks name and question -> pair -> (label, where)."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    sizes: set[int] = set()
    for where, rec in _records(file):
        if not isinstance(rec, dict):
            raise ConfigError(f"{file} {where}: expected a JSON object")
        try:
            meta, label = (_argilla if "fields" in rec or "label.responses" in rec
                           else _labelstudio)(rec, f"{file} {where}")
            qid, pair = str(meta["question_id"]), str(meta["pair"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{file} {where}: not an exported snapaudit task (missing "
                              f"{exc})") from None
        if "sample" in meta:
            sizes.add(int(meta["sample"]))
        if pair in out.get(qid, {}):
            raise ConfigError(f"{file} {where}: question {qid} pair {pair} is given twice "
                              f"(first at {out[qid][pair][1]})")
        out.setdefault(qid, {})[pair] = (label, where)
    if len(sizes) > 1:
        raise ConfigError(f"{file}: the tasks name different samples {sorted(sizes)}")
    return (sizes.pop() if sizes else None), out


def import_annotations(run_dir: Path, file: Path, annotator: str) -> int:
    """Save ``file``'s finished annotations as the judge ``human:<annotator>`` and lock them;
    returns the number of questions imported."""
    sample, found = read_annotations(Path(file))
    if not found:
        raise ConfigError(f"{file}: no annotated task")
    with ReviewSession.open(run_dir, annotator, sample=sample) as session:
        items = {i.question_id: i for i in session.label_items()}
        for qid, pairs in found.items():
            item = items.get(qid)
            where = next(iter(pairs.values()))[1]
            if item is None:
                raise ConfigError(f"{file} {where}: question {qid!r} is not in the label "
                                  "sample")
            unknown = [p for p in pairs if p not in item.pairs]
            if unknown:
                raise ConfigError(f"{file} {pairs[unknown[0]][1]}: question {qid} has no "
                                  f"pair {unknown[0]!r}")
            missing = [p for p in item.pairs if p not in pairs]
            if missing:
                raise ConfigError(f"{file}: question {qid} lacks the pair(s) "
                                  f"{', '.join(missing)} (its tasks start at {where})")
        for qid, pairs in found.items():
            labels: dict[str, Label] = {p: v[0] for p, v in pairs.items()}  # type: ignore[misc]
            session.save_labels(qid, labels)
        session.finish_labels()
    return len(found)
