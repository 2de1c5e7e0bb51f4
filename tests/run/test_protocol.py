"""Protocol models: unknown keys, overrides, the hash split, the resolved TOML."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import ProtocolError
from snapaudit.run.record.protocol import (
    apply_overrides,
    bound_fields,
    changed_fields,
    load_protocol,
    parse_protocol,
    protocol_hash,
    to_toml,
)


def _template() -> dict[str, Any]:
    return tomllib.loads(files("snapaudit.cli.templates").joinpath("http.toml").read_text())


def test_unknown_keys_are_named() -> None:
    data = _template()
    data["design"]["repets"] = 3
    data["systems"]["old"]["answer_pth"] = "x"
    with pytest.raises(ProtocolError) as info:
        parse_protocol(data, "p.toml")
    text = str(info.value)
    assert "unknown key 'design.repets'" in text
    assert "unknown key 'systems.old.answer_pth'" in text


def test_cross_field_errors() -> None:
    data = _template()
    data["states"]["new"] = "n9"
    with pytest.raises(ProtocolError, match=r"states\.new = 'n9' is not in states\.order"):
        parse_protocol(data)
    data = _template()
    del data["systems"]["new"]
    with pytest.raises(ProtocolError, match=r"needs \[systems.<state>\] for \['new'\]"):
        parse_protocol(data)


def test_overrides_parse_toml_values() -> None:
    out = apply_overrides({"design": {"repeats": 2}},
                          ["design.repeats=3", "run.rate_limit_per_s=2.5", "name=plain",
                           "states.order=[\"a\", \"b\"]"])
    assert out == {"design": {"repeats": 3}, "run": {"rate_limit_per_s": 2.5}, "name": "plain",
                   "states": {"order": ["a", "b"]}}
    with pytest.raises(ProtocolError, match=r"expected dotted\.key=value"):
        apply_overrides({}, ["design.repeats"])


def test_run_knobs_are_not_bound_but_everything_else_is() -> None:
    base = parse_protocol(_template())
    knobs = parse_protocol(apply_overrides(_template(), ["run.concurrency=99",
                                                         "run.log_level=\"debug\""]))
    assert protocol_hash(knobs) == protocol_hash(base)
    shaped = parse_protocol(apply_overrides(_template(), ["systems.new.answer_path=\"a.b\""]))
    assert protocol_hash(shaped) != protocol_hash(base)
    assert changed_fields(bound_fields(base), bound_fields(shaped)) == ["systems.new.answer_path"]
    assert "run" not in bound_fields(base)


def test_resolved_toml_round_trips(tmp_path: Path) -> None:
    data = apply_overrides(_template(), ['name="quote \\" and \\\\ slash"',
                                         'systems.old.headers={"X-Team"="a b"}'])
    protocol = parse_protocol(data)
    path = tmp_path / "resolved.toml"
    path.write_text(to_toml(protocol))
    assert load_protocol(path) == protocol


def test_missing_and_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ProtocolError, match="not found"):
        load_protocol(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [")
    with pytest.raises(ProtocolError, match="not valid TOML"):
        load_protocol(bad)
