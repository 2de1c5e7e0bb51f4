"""[testbed.paths]: seeded shard orders, the p<j>.<state> states, protocol hashes."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest

from snapaudit.errors import ProtocolError
from snapaudit.run.record.protocol import parse_protocol, protocol_hash, to_toml
from snapaudit.testbed.paths import expand_states, path_ladders, path_orders, state_shards

BASE: dict[str, Any] = {
    "name": "p", "states": {"order": ["n0", "n1", "n3", "n7"], "old": "n1", "new": "n7"},
    "cohort": {"source": "jsonl", "path": "q.jsonl", "size": 3}, "gold": {"path": "g.jsonl"},
    "system": {"kind": "testbed"},
    "testbed": {"corpus": "c", "states": {"n0": 0, "n1": 1, "n3": 3, "n7": 7}}}
# the protocol hash of BASE before [testbed.paths] existed
BASE_HASH = "7f247586171d45c006b7e502ca5d8c0e9d263b66184401398d54c01e21720d11"


def _with(**paths: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["testbed"]["paths"] = paths
    return data


def test_orders_are_seeded_permutations_with_path_0_the_protocols() -> None:
    orders = path_orders(7, 4, seed=1)
    assert orders[0] == tuple(range(7))
    assert all(sorted(o) == list(range(7)) for o in orders)
    assert len(set(orders)) == 4  # distinct orders here
    assert path_orders(7, 4, seed=1) == orders  # identical inputs, identical orders
    assert path_orders(7, 4, seed=2)[1:] != orders[1:]
    assert path_orders(7, 2, seed=1) == orders[:2]  # path j does not depend on K
    assert state_shards("p2.n3", 3, orders) == orders[2][:3]
    assert state_shards("n3", 3, orders) == (0, 1, 2)


def test_states_expand_path_by_path_with_n0_shared() -> None:
    order, states = expand_states(["n0", "n1", "n3"], {"n0": 0, "n1": 1, "n3": 3}, 3)
    assert order == ["n0", "n1", "n3", "p1.n1", "p1.n3", "p2.n1", "p2.n3"]
    assert states == {"n0": 0, "n1": 1, "n3": 3, "p1.n1": 1, "p1.n3": 3, "p2.n1": 1,
                      "p2.n3": 3}
    assert expand_states(order, states, 3) == (order, states)  # idempotent
    assert path_ladders(order, states, 3) == (("n0", "n1", "n3"), ("n0", "p1.n1", "p1.n3"),
                                              ("n0", "p2.n1", "p2.n3"))


def test_protocol_without_paths_or_with_one_path_keeps_its_hash() -> None:
    assert protocol_hash(parse_protocol(BASE)) == BASE_HASH
    assert protocol_hash(parse_protocol(_with(count=1, seed=5))) == BASE_HASH
    assert "paths" not in to_toml(parse_protocol(_with(count=1)))


def test_three_paths_resolve_and_round_trip() -> None:
    p = parse_protocol(_with(count=3, seed=4))
    assert p.states.order[4:] == ["p1.n1", "p1.n3", "p1.n7", "p2.n1", "p2.n3", "p2.n7"]
    assert p.testbed is not None and p.testbed.states["p2.n3"] == 3
    again = parse_protocol(tomllib.loads(to_toml(p)))
    assert protocol_hash(again) == protocol_hash(p) != BASE_HASH
    assert protocol_hash(parse_protocol(_with(count=3, seed=5))) != protocol_hash(p)


@pytest.mark.parametrize("state,shards", [("p3.n1", 1), ("p1.n1", 2), ("p1.zz", 1)])
def test_reserved_names_are_refused(state: str, shards: int) -> None:
    data = _with(count=3)
    data["states"]["order"].append(state)
    data["testbed"]["states"][state] = shards
    with pytest.raises(ProtocolError, match=r"reserved for the states of testbed\.paths"):
        parse_protocol(data)


def test_paths_need_an_in_process_retriever() -> None:
    data = _with(count=2)
    data["testbed"]["retriever"] = {"kind": "http", "url": "http://127.0.0.1:1/search"}
    with pytest.raises(ProtocolError, match="in-process retriever"):
        parse_protocol(data)
    with pytest.raises(ProtocolError, match="count"):
        parse_protocol(_with(count=0))
