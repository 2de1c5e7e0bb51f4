"""Write a real lm-evaluation-harness log with `repeats: 2` from a seeded table model.

Run from the repository root with lm-eval installed (e.g. in its own venv):
    python examples/import/lmeval/make_log.py OUT_DIR
The model (`seeded`, model_args `model=old|new`) answers from examples/import/table.py.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lm_eval
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from table import answer


@register_model("seeded")
class Seeded(LM):
    def __init__(self, model: str = "old", **kwargs):
        super().__init__()
        self.name = model

    def generate_until(self, requests):
        seen = {}
        out = []
        for request in requests:
            text = request.args[0].removeprefix("Question: ").removesuffix("\nAnswer:")
            seen[text] = seen.get(text, 0) + 1
            out.append(answer(self.name, text, seen[text])[0])
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError


if __name__ == "__main__":
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    out = sys.argv[1]
    for name in ("old", "new"):
        tracker = EvaluationTracker(output_path=os.path.join(out, name))
        results = lm_eval.simple_evaluate(
            model="seeded", model_args=f"model={name}", tasks=["snapqa"], log_samples=True,
            task_manager=TaskManager(include_path=os.path.dirname(os.path.abspath(__file__))),
            evaluation_tracker=tracker)
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        tracker.save_results_samples(task_name="snapqa", samples=samples[("snapqa")])
