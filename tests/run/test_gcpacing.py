"""quiet_imports: no collection while a command's modules are imported, the collector as it
was afterwards, and a paced stage's freeze left alone."""

from __future__ import annotations

import gc
import threading

from snapaudit.run.execution.gcpacing import paced_gc, quiet_imports


def _collections() -> int:
    return sum(s["collections"] for s in gc.get_stats())


def test_no_collection_inside_and_the_collector_enabled_after() -> None:
    assert gc.isenabled()
    before, threshold = _collections(), gc.get_threshold()
    with quiet_imports():
        assert not gc.isenabled()
        junk = [[i] for i in range(50_000)]  # far past the young threshold
        assert _collections() == before
        del junk
    assert gc.isenabled() and gc.get_threshold() == threshold
    assert gc.get_freeze_count() == 0  # what was alive went to the oldest generation


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with quiet_imports():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_blocks_share_one_pause_and_the_last_enables() -> None:
    first, second = quiet_imports(), quiet_imports()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the second still imports
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_paced_stage_keeps_its_freeze() -> None:
    stage = paced_gc()
    stage.__enter__()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        done = threading.Event()

        def importer() -> None:
            with quiet_imports():
                pass
            done.set()

        threading.Thread(target=importer).start()
        assert done.wait(10)
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        stage.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0
