"""Which states' sync targets share their slots (``isolation = "thread"``).

The slots of a sync target belong to the callable and to what it shares, not to the state:
two states share one :class:`~snapaudit.systems.python_threads.ThreadSlots` when their
targets are the same function object, live in the same module, or reach a common local
module (the target module and the project's modules it imports,
:func:`snapaudit.systems.python_code.local_modules`), transitively. A model held in any of
those modules is then never entered by two calls at once, whatever ``[run] concurrency``
is, unless every state of the group says ``thread_safe = true`` (each keeps its own slots).
A shared group has the fewest slots any of its states asks for.

One :class:`SlotGroups` serves one run (it lives in the run's
:class:`~snapaudit.systems.resources.RunResources`); states join it when their systems are
built, and each state's slots are looked up at its first call, once every system is built.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from snapaudit.systems.python_threads import ThreadSlots


@dataclass(frozen=True, slots=True)
class _Member:
    slots: int
    thread_safe: bool


class SlotGroups:
    """The states of one run's sync targets and the slots each group shares."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}  # union-find over states
        self._holder: dict[Hashable, str] = {}  # what a target shares -> a state sharing it
        self._members: dict[str, _Member] = {}
        self._slots_of: dict[str, ThreadSlots] = {}
        self._open: dict[int, set[str]] = {}  # id(slots) -> states not yet closed

    def join(self, state: str, shares: Iterable[Hashable], slots: int,
             thread_safe: bool) -> None:
        """Add ``state``, whose target shares ``shares`` (the function, modules)."""
        self._parent[state] = state
        self._members[state] = _Member(slots, thread_safe)
        for item in shares:
            other = self._holder.setdefault(item, state)
            if other != state:
                self._parent[self._find(other)] = self._find(state)

    def _find(self, state: str) -> str:
        while self._parent[state] != state:
            self._parent[state] = self._parent[self._parent[state]]
            state = self._parent[state]
        return state

    def group(self, state: str) -> list[str]:
        """The states sharing slots with ``state`` (itself alone when they are all
        ``thread_safe``)."""
        root = self._find(state)
        group = [s for s in self._members if self._find(s) == root]  # in the order joined
        return group if any(not self._members[s].thread_safe for s in group) else [state]

    def slots(self, state: str, timeout_s: float) -> ThreadSlots:
        """The slots of ``state``'s calls (made at the first call of its group)."""
        found = self._slots_of.get(state)
        if found is not None:
            return found
        group = self.group(state)
        made = next((self._slots_of[s] for s in group if s in self._slots_of), None)
        if made is None:
            made = ThreadSlots(min(self._members[s].slots for s in group), timeout_s, group)
            self._open[id(made)] = set(group)
        for s in group:
            self._slots_of[s] = made
        return made

    def close(self, state: str) -> None:
        """``state``'s system is closed: its slots' threads end with the last of its group
        (a system built again later, as by another run given the same resources, gets new
        slots)."""
        made = self._slots_of.pop(state, None)
        if made is None:
            return
        still = self._open.get(id(made), set())
        still.discard(state)
        if not still:
            self._open.pop(id(made), None)
            made.shutdown()

    async def aclose(self) -> None:
        """Every group's threads end (the run is over)."""
        for made in {id(m): m for m in self._slots_of.values()}.values():
            made.shutdown()
        self._slots_of.clear()
        self._open.clear()
