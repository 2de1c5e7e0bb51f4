"""Random corpus paths (``[testbed.paths]``): K shard orders and the states along each.

Path 0 is the protocol's order ``0, 1, ..., N-1``; path j >= 1 is a seeded permutation of the
N shards of the corpus: shards sorted by ``sha256("snapaudit/path/v1\\0{seed}\\0{j}\\0{shard}")``
(no random generator whose stream could change between library versions, so identical
inputs give identical orders on every platform). A state with p shards on path j searches
the first p shards of path j's order.

Names: path 0 keeps the protocol's state names (``n1``, ``n3``, ``n7``); path j >= 1 names
its states ``p<j>.<name>`` (``p2.n3``: the first 3 shards of path 2's order). A state with 0
shards (``n0``) retrieves nothing on every path and is shared by all of them. With
``count = K > 1`` the protocol's ``states.order`` and ``testbed.states`` are expanded by
:func:`expand_states` (path 0's states first, then path 1's, ...); names of the form
``p<j>.<name>`` are reserved for this expansion.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from snapaudit.errors import ProtocolError

PATH_NAME = re.compile(r"p([0-9]+)\.(.+)")


def path_state(path: int, base: str, shards: int) -> str:
    """The name of the state with ``shards`` shards of path ``path`` (0: shared ``n0``)."""
    return base if path == 0 or shards == 0 else f"p{path}.{base}"


def path_of(state: str) -> tuple[int, str]:
    """(path, the path-0 state it mirrors) of a state name."""
    m = PATH_NAME.fullmatch(state)
    return (int(m.group(1)), m.group(2)) if m else (0, state)


def base_states(order: Sequence[str]) -> list[str]:
    """Path 0's states (those of ``order`` that are not ``p<j>.<name>``), in order."""
    return [s for s in order if PATH_NAME.fullmatch(s) is None]


def expand_states(order: Sequence[str], states: Mapping[str, int], count: int
                  ) -> tuple[list[str], dict[str, int]]:
    """``states.order`` and ``testbed.states`` with every path's states (idempotent: an
    expanded protocol expands to itself). ValueError for a reserved name that is not one."""
    base = base_states(order)
    want_order = list(base)
    want: dict[str, int] = {s: n for s, n in states.items() if PATH_NAME.fullmatch(s) is None}
    for j in range(1, count):
        for s in base:
            n = want.get(s)
            if n is not None and n > 0:
                want_order.append(path_state(j, s, n))
                want[path_state(j, s, n)] = n
    for s in [*order, *states]:
        m = PATH_NAME.fullmatch(s)
        if m is None:
            continue
        j, b = int(m.group(1)), m.group(2)
        if not (1 <= j < count and s in want and states.get(s, want[s]) == want[s]):
            raise ValueError(f"state {s!r}: names p<j>.<state> are reserved for the states "
                             f"of testbed.paths (here paths 1..{count - 1} of the states "
                             f"{', '.join(base)}), with the shard count of <state> {b!r}")
    return want_order, want


def expand_path_states(data: Any, source: str = "protocol") -> Any:
    """Raw protocol data with the states of ``[testbed.paths]`` added (unchanged otherwise);
    ProtocolError naming ``source`` for a misused reserved name."""
    testbed = data.get("testbed") if isinstance(data, dict) else None
    paths = testbed.get("paths") if isinstance(testbed, dict) else None
    count = paths.get("count") if isinstance(paths, dict) else None
    states = data.get("states") if isinstance(data, dict) else None
    if not (isinstance(count, int) and count > 1 and isinstance(states, dict)
            and isinstance(states.get("order"), list) and isinstance(testbed, dict)
            and isinstance(testbed.get("states"), dict)):
        return data
    try:
        order, shards = expand_states(states["order"], testbed["states"], count)
    except ValueError as exc:
        raise ProtocolError(f"{source}: invalid protocol:\n  {exc}") from None
    return {**data, "states": {**states, "order": order},
            "testbed": {**testbed, "states": shards}}


def path_ladders(order: Sequence[str], states: Mapping[str, int], count: int
                 ) -> tuple[tuple[str, ...], ...]:
    """Each path's states in the protocol's order (path 0 first; ``n0`` on every path)."""
    base = base_states(order)
    return tuple(tuple(path_state(j, s, states.get(s, 0)) for s in base)
                 for j in range(count))


def path_orders(n_shards: int, count: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The shard order of every path: path 0 ``0..N-1``, the others seeded permutations."""
    identity = tuple(range(n_shards))
    return (identity, *(_permutation(identity, seed, j) for j in range(1, count)))


def _permutation(shards: tuple[int, ...], seed: int, path: int) -> tuple[int, ...]:
    def key(shard: int) -> bytes:
        return hashlib.sha256(f"snapaudit/path/v1\0{seed}\0{path}\0{shard}".encode()).digest()

    return tuple(sorted(shards, key=key))


def state_shards(state: str, shards: int, orders: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The shards a state searches: the first ``shards`` of its path's order."""
    path, _ = path_of(state)
    if path >= len(orders):
        raise ValueError(f"state {state!r} names path {path} of {len(orders)}")
    return tuple(orders[path][:shards])
