"""The corpus manifest and the shard layout: which shard a document goes to, where it lives.

Every shard file is pinned by size and SHA-256 in ``corpus_manifest.json``;
:func:`verify_corpus` re-hashes them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from snapaudit._model import Frozen
from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import sha256_file, sha256_json

MANIFEST = "corpus_manifest.json"
SCHEMA_VERSION = 1


class InputInfo(Frozen):
    name: str
    format: str
    size: int
    sha256: str
    records: int
    documents: int


class ShardInfo(Frozen):
    count: int
    bytes: int
    sha256: str


class CorpusManifest(Frozen):
    schema_version: int = SCHEMA_VERSION
    seed: int
    shards: list[ShardInfo]
    total: int
    duplicates: int = 0
    assignment: str = "sha256(seed 0x00 id)[:8] mod N"
    inputs: list[InputInfo]

    def hash(self) -> str:
        """The corpus hash: sha256 of the manifest's canonical JSON."""
        return sha256_json(self.model_dump(mode="json"))


def shard_of(doc_id: str, seed: int, n_shards: int) -> int:
    digest = hashlib.sha256(f"{seed}\x00{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n_shards


def shard_path(corpus_dir: Path, shard: int, suffix: str = ".jsonl") -> Path:
    return corpus_dir / "shards" / f"shard-{shard:02d}{suffix}"


def load_manifest(corpus_dir: str | Path) -> CorpusManifest:
    path = Path(corpus_dir) / MANIFEST
    if not path.exists():
        raise ConfigError(f"{corpus_dir}: no {MANIFEST} (build it with `snapaudit corpus build`)")
    try:
        return CorpusManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise IntegrityError(f"{path}: invalid corpus manifest: {exc}") from exc


def verify_corpus(corpus_dir: str | Path) -> CorpusManifest:
    """Re-hash every shard file against the manifest; raise IntegrityError on a change."""
    manifest = load_manifest(corpus_dir)
    for j, info in enumerate(manifest.shards):
        got = sha256_file(shard_path(Path(corpus_dir), j))
        if got != info.sha256:
            raise IntegrityError(f"shard {j} of {corpus_dir} changed: {got} != {info.sha256}")
    return manifest
