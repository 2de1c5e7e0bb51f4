"""promptfoo Python provider: answers from examples/import/table.py (no network).

promptfoo does not tell a provider which repeat it serves, so each call draws its repeat
seed from a fresh random number: the shipped log is one real run."""

from __future__ import annotations

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table import BY_TEXT, answer


def call_api(prompt, options, context):  # promptfoo's provider signature
    model = options.get("config", {}).get("model", "old")
    question = context["vars"]["question"]
    reply, docs = answer(model, BY_TEXT[question], random.randrange(1_000_000))
    return {"output": reply, "metadata": {"retrieved_context_ids": docs}}
