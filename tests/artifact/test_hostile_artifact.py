"""Crafted artifacts: the verifier reads nothing outside its root, follows no link, and turns
absurd claims into exit 3 with a message (never a traceback)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from snapaudit.artifact.export import export_artifact
from snapaudit.hashing import sha256_file
from tests.helpers.cli import exit_code


@pytest.fixture(scope="module")
def artifact(finished_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_artifact(finished_run, tmp_path_factory.mktemp("hostile-art") / "artifact")


def _manifest(root: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((root / "manifest.json").read_text())
    return data


def _list(root: Path, name: str, digest: str) -> None:
    """A forger's manifest: ``name`` listed with a matching hash."""
    manifest = _manifest(root)
    files = manifest["files"]
    assert isinstance(files, dict)
    files[name] = digest
    (root / "manifest.json").write_text(json.dumps(manifest))


def _rewrite(root: Path, name: str, edit: Callable[[object], object]) -> None:
    path = root / name
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    manifest = _manifest(root)
    files = manifest["files"]
    assert isinstance(files, dict)
    files[name] = sha256_file(path)
    (root / "manifest.json").write_text(json.dumps(manifest))


def _setup(artifact: Path, tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "art"
    shutil.copytree(artifact, root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside the artifact\n")
    return root, outside


def _verify(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = exit_code(["verify", str(root)])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "Traceback" not in err
    return err


def test_manifest_entry_outside_the_root_is_refused(artifact: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    _list(root, "../outside/secret.txt", sha256_file(outside / "secret.txt"))
    assert "'../outside/secret.txt'" in _verify(root, capsys)


def test_absolute_manifest_entry_is_refused(artifact: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    _list(root, str(outside / "secret.txt"), sha256_file(outside / "secret.txt"))
    assert "absolute path" in _verify(root, capsys)


def test_symlinked_file_is_refused_unfollowed(artifact: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    shutil.move(root / "results.json", outside / "results.json")  # same bytes, same hash
    (root / "results.json").symlink_to(outside / "results.json")
    err = _verify(root, capsys)
    assert "'results.json'" in err and "symbolic link" in err


def test_symlinked_directory_is_refused_unfollowed(artifact: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    shutil.move(root / "tables", outside / "tables")
    (root / "tables").symlink_to(outside / "tables", target_is_directory=True)
    err = _verify(root, capsys)
    assert "'tables'" in err and "symbolic link" in err


def test_judge_name_that_is_a_path_is_refused_before_reading(
        artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    (outside / "victim.cells.jsonl").write_text("{}\n")

    def rename(protocol: object) -> object:
        assert isinstance(protocol, dict)
        protocol.setdefault("judge", {})["name"] = "/../../../outside/victim"
        return protocol

    _rewrite(root, "protocol.json", rename)
    err = _verify(root, capsys)
    assert "judge name '/../../../outside/victim'" in err


def test_lock_stage_that_is_a_path_is_refused_before_reading(
        artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, outside = _setup(artifact, tmp_path)
    (outside / "victim.cells.jsonl").write_text("{}\n")

    def restage(locks: object) -> object:
        assert isinstance(locks, list)
        locks[0][0]["stage"] = "../../outside/victim"
        return locks

    _rewrite(root, "locks.json", restage)
    assert "stage '../../outside/victim'" in _verify(root, capsys)


def test_odd_file_name_is_refused(artifact: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = _setup(artifact, tmp_path)
    (root / "tables" / "x\nevil.jsonl").write_text("{}\n")
    assert "x\\nevil.jsonl" in _verify(root, capsys)


@pytest.mark.parametrize("value", ["9" * 5000, "[" * 100_000 + "1" + "]" * 100_000])
def test_absurd_claims_are_exit_3(artifact: Path, tmp_path: Path, value: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = _setup(artifact, tmp_path)
    claims = (root / "claims.json").read_text()
    first = json.loads(claims)[0]
    text = json.dumps([{**first, "value": 0}]).replace('"value": 0', f'"value": {value}')
    (root / "claims.json").write_text(text)
    _list(root, "claims.json", sha256_file(root / "claims.json"))
    err = _verify(root, capsys)
    assert "claims.json" in err
