"""Write the import test fixtures with faults: real promptfoo and lm-eval runs against
``fake_openai.py`` (empty, blank and null outputs, an HTTP 400), then sanitized.

    python examples/import/fault_logs.py PROMPTFOO_BIN LM_EVAL_BIN OUT_DIR

PROMPTFOO_BIN: ``promptfoo`` of ``npm install promptfoo`` (e.g. /tmp/pf/node_modules/.bin/
promptfoo); LM_EVAL_BIN: ``lm_eval`` of ``pip install 'lm-eval[api]'`` (its own venv). Run
from the repository root (the lm-eval task reads examples/import/lmeval/questions.jsonl).
Sanitizing drops what names this machine (output path, HTTP date and server headers,
``pretty_env_info``, the repository's absolute path) and writes the loopback port as 8000; every answer, error and field the
importers read is kept as the tools wrote it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PORT = re.compile(r"127\.0\.0\.1:\d+")


def serve() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(HERE / "fake_openai.py")],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline().split()[1])


def run_promptfoo(exe: str, out: Path) -> None:
    proc, port = serve()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
           "OPENAI_API_KEY": "sk-fake", "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1"}
    raw = out.with_suffix(".raw.json")
    try:
        # exit 100: some tests errored (what this run is for)
        subprocess.run([exe, "eval", "-c", "promptfooconfig.yaml", "--repeat", "3",
                        "--no-cache", "-o", str(raw)], cwd=HERE / "promptfoo_api", env=env,
                       check=False)
    finally:
        proc.kill()
    doc = json.loads(raw.read_text(encoding="utf-8"))
    doc["config"]["outputPath"] = ["out.json"]
    for entry in doc["results"]["results"]:
        for place in (entry.get("response") or {}, entry):
            http = (place.get("metadata") or {}).get("http")
            if isinstance(http, dict):
                http["headers"] = {}
    out.write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")
    raw.unlink()


def run_lmeval(exe: str, out: Path) -> None:
    proc, port = serve()
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for model in ("old-model", "new-model"):
                args = (f"model={model},base_url=http://127.0.0.1:{port}/v1/chat/completions,"
                        "num_concurrent=1,tokenized_requests=False,tokenizer_backend=None")
                subprocess.run([exe, "--model", "local-chat-completions", "--model_args", args,
                                "--tasks", "snapqa3", "--include_path",
                                str(HERE / "lmeval_api"), "--apply_chat_template",
                                "--log_samples", "--output_path", f"{tmp}/{model}"],
                               env=env, check=True)
            for path in Path(tmp).glob("*/*/*"):
                target = out / path.parent.parent.name / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                text = PORT.sub("127.0.0.1:8000", path.read_text(encoding="utf-8"))
                text = text.replace(str(HERE.parents[1]) + "/", "")  # the repository root
                if path.name.startswith("results_"):
                    doc: dict[str, Any] = json.loads(text)
                    doc.pop("pretty_env_info", None)
                    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
                target.write_text(text, encoding="utf-8")
    finally:
        proc.kill()


def main() -> None:
    promptfoo, lm_eval, out = sys.argv[1], sys.argv[2], Path(sys.argv[3]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    run_promptfoo(shutil.which(promptfoo) or promptfoo, out / "promptfoo_repeat3_faults.json")
    run_lmeval(shutil.which(lm_eval) or lm_eval, out / "lmeval_api")


if __name__ == "__main__":
    main()
