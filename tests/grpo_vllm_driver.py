"""Runs the project's GRPO with rollouts from vLLM (CPU build) for tests/test_grpo_vllm.py.

Started with the vLLM virtualenv's python (``.venv-vllm``; see tests/test_vllm_real.py):

    .venv-vllm/bin/python tests/grpo_vllm_driver.py MODEL_DIR OUT_DIR

It calls :func:`selfplay.train.rl.grpo.train_grpo` with ``rollout_engine: vllm`` and
``vllm_mode: colocate`` (TRL's use_vllm: the engine runs inside this process). Two spies
wrap the real engine without changing what it does: every ``vllm.LLM.generate`` call's
completions are kept as text, and every weight load TRL pushes into the engine's model
is counted. The CPU build is prepared by the project itself (``selfplay.train.rl.vllm_cpu``,
called when the trainer's config is built). ``OUT_DIR/result.json`` holds the training
record, what the spies saw and the largest magnitude in the LoRA adapter's B matrices
(0 before training).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROMPTS = ["Name a fruit.", "Write one word.", "Say hello.", "Name a colour."]
SETTINGS = {
    "group_size": 2,
    "batch_size": 2,
    "steps_per_generation": 2,
    "max_steps": 2,
    "epochs": 1,
    "max_completion_length": 12,
    "max_prompt_tokens": 96,
    "finetune": "lora",
    "lora": {"r": 4, "alpha": 8},
    "learning_rate": 1e-3,
    "seed": 3,
    "rollout_engine": "vllm",
    "vllm_mode": "colocate",
}


def count_e(prompts, completions, **columns):
    """Reward: a tenth of the number of letters 'e' in a completion."""
    return [completion[-1]["content"].count("e") / 10 for completion in completions]


def main(model_dir: str, out_dir: str) -> None:
    import vllm

    from selfplay.train.rl.grpo import train_grpo

    seen = {"engines": 0, "generate_calls": 0, "texts": [], "weight_loads": 0}
    init, generate = vllm.LLM.__init__, vllm.LLM.generate

    def spy_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen["engines"] += 1
        seen["engine_args"] = {k: kwargs.get(k) for k in ("distributed_executor_backend", "max_model_len")}
        model = self.llm_engine.model_executor.driver_worker.model_runner.model
        load = model.load_weights

        def spy_load(weights):
            seen["weight_loads"] += 1
            return load(weights)

        model.load_weights = spy_load

    def spy_generate(self, *args, **kwargs):
        outputs = generate(self, *args, **kwargs)
        seen["generate_calls"] += 1
        seen["texts"].extend(o.text for out in outputs for o in out.outputs)
        return outputs

    vllm.LLM.__init__, vllm.LLM.generate = spy_init, spy_generate
    out = Path(out_dir)
    records = [{"prompt": [{"role": "user", "content": q}]} for q in PROMPTS]
    record = train_grpo(
        model_dir, records, count_e, SETTINGS, out / "policy", recordings_path=out / "rollouts.jsonl"
    )

    from safetensors.torch import load_file

    weights = load_file(str(out / "policy" / "adapter_model.safetensors"))
    lora_b = max(float(t.abs().max()) for name, t in weights.items() if "lora_B" in name)
    (out / "result.json").write_text(json.dumps({"record": record, "seen": seen, "lora_b_max": lora_b}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
