"""Write two real inspect_ai logs (`--epochs 2`) from a seeded table model (no network).

Run from the repository root with inspect_ai installed:
    python examples/import/inspect/make_logs.py OUT_DIR
Two models, `seeded/old` and `seeded/new`, answer from examples/import/table.py; each sample
records the retrieved doc ids in its store under `retrieved_context_ids`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import match
from inspect_ai.solver import generate, solver
from inspect_ai.util import store
from table import QUESTIONS, answer

CALLS: dict[tuple[str, str], int] = {}


@modelapi(name="seeded")
class Seeded(ModelAPI):
    async def generate(self, input, tools, tool_choice, config):
        text = input[-1].text
        key = (self.model_name, text)
        CALLS[key] = CALLS.get(key, 0) + 1
        if self.model_name == "flaky" and text.startswith("What is the chemical") \
                and CALLS[key] == 2:
            raise RuntimeError("simulated provider failure")
        reply, docs = answer(self.model_name, text, CALLS[key])
        store().set("retrieved_context_ids", docs)
        return ModelOutput.from_content(model=self.model_name, content=reply)


@solver
def answer_it():
    return generate()


@task
def snapqa():
    return Task(dataset=[Sample(id=q, input=t, target=g) for q, t, g, _w in QUESTIONS],
                solver=answer_it(), scorer=match())


if __name__ == "__main__":
    out = sys.argv[1]
    for name in ("old", "new"):
        eval(snapqa(), model=f"seeded/{name}", epochs=2, log_dir=out, display="none",
             log_format="eval")
    # a log with one errored sample (q3, second epoch) for the --allow-errors path
    eval(snapqa(), model="seeded/flaky", epochs=2, log_dir=os.path.join(out, "errored"),
         display="none", log_format="eval", fail_on_error=False, retry_on_error=0)
