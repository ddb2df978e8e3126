"""Resources checked before anything is submitted (issue 19).

- vLLM gets tensor_parallel_size from the config (engine arguments built without vLLM),
  and paper 002's 32B pool models are planned on 2 GPUs each, the others on 1.
- The plan-time GPU memory check: a 32B model with a 40,960-token context on one 80 GB
  GPU, or full fine-tuning that does not fit the GPU its kind asks for, is refused in one
  line naming the rule and the resources key; every shipped paper config fits.
"""

from __future__ import annotations

import re

import pytest
from test_config_loading import REPO, SHIPPED, dry_run, load_as_snakemake

from selfplay.errors import UserError
from selfplay.llm.factory import checked_settings
from selfplay.llm.vllm_backend import engine_args
from selfplay.plan import gpu_memory
from selfplay.plan.serving import job_gpus, pool_backend


def evolve_cfg(overrides=()):
    return load_as_snakemake(("config/papers/evolve.yaml",), list(overrides))


def test_vllm_engine_args_carry_tensor_parallel_size():
    args = engine_args("m", tensor_parallel_size=2, max_model_len=40960)
    assert args["tensor_parallel_size"] == 2 and args["max_model_len"] == 40960
    assert "tensor_parallel_size" not in engine_args("m")  # vLLM's own default (1)
    # a backend setting the factory accepts (checked against the constructor)
    cls, settings = checked_settings({"name": "vllm", "model": "m", "tensor_parallel_size": 2})
    assert settings["tensor_parallel_size"] == 2
    with pytest.raises(UserError, match="tensor_parallel_size must be an integer >= 1"):
        engine_args("m", tensor_parallel_size=0)
    with pytest.raises(UserError, match="keep one"):
        engine_args("m", tensor_parallel_size=2, engine_kwargs={"tensor_parallel_size": 4})


def test_the_32b_pool_models_are_served_over_two_gpus():
    cfg = evolve_cfg()
    for name in ("qwen3-32b", "r1-distill-qwen-32b"):
        backend = pool_backend(cfg, name)
        assert backend["tensor_parallel_size"] == 2 and backend["max_model_len"] == 40960
        assert job_gpus(cfg["resources"]["generate"], backend) == 2
        assert (
            engine_args("m", tensor_parallel_size=backend["tensor_parallel_size"])["tensor_parallel_size"]
            == 2
        )
    assert job_gpus(cfg["resources"]["generate"], pool_backend(cfg, "qwen3-4b")) == 1


def test_pool_models_are_served_within_their_own_context_and_mimo_with_its_config_code():
    # vLLM refuses a max_model_len above a model's max_position_embeddings (32,768 for
    # MiMo-7B-RL and Phi-4-reasoning; 40,960 for Qwen3), and MiMo's model type "mimo" is
    # unknown to transformers: without its folder's config code vLLM cannot read it.
    cfg = evolve_cfg()
    contexts = {name: pool_backend(cfg, name)["max_model_len"] for name in ("mimo-7b-rl", "phi-4-reasoning")}
    assert contexts == {"mimo-7b-rl": 32768, "phi-4-reasoning": 32768}
    assert pool_backend(cfg, "qwen3-4b")["max_model_len"] == 40960
    mimo = pool_backend(cfg, "mimo-7b-rl")
    cls, settings = checked_settings({**mimo, "model": "m"})
    assert engine_args(**settings)["trust_remote_code"] is True
    for name in ("qwen3-4b", "phi-4-reasoning", "r1-distill-qwen-32b"):
        backend = pool_backend(cfg, name)
        assert "trust_remote_code" not in backend
        assert "trust_remote_code" not in engine_args(**checked_settings({**backend, "model": "m"})[1])
    with pytest.raises(UserError, match="trust_remote_code must be true or false"):
        engine_args("m", trust_remote_code="yes")


def test_the_evolve_plan_asks_for_two_gpus_for_each_32b_pool_job(tmp_path):
    proc = dry_run(tmp_path, "--configfile", str(REPO / "config/papers/evolve.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    gpus = {}
    for block in proc.stdout.split("rule evolve_pool_generate:")[1:]:
        model = re.search(r"wildcards: pmodel=([^,\s]+)", block).group(1)
        gpus.setdefault(model, set()).add(int(re.search(r"resources: .*\bgpu=(\d+)", block).group(1)))
    assert gpus == {
        "qwen3-4b": {1},
        "qwen3-8b": {1},
        "qwen3-14b": {1},
        "qwen3-30b-a3b": {1},
        "qwen3-32b": {2},
        "mimo-7b-rl": {1},
        "phi-4-reasoning": {1},
        "r1-distill-qwen-32b": {2},
    }


@pytest.mark.parametrize(
    "files", [f for f in SHIPPED if f], ids=lambda f: "+".join(p.split("/")[-1][:-5] for p in f)
)
def test_every_paper_config_fits_the_gpus_it_asks_for(files):
    rows = gpu_memory.check(load_as_snakemake(files))
    assert rows, "a paper config plans GPU jobs"
    for need, gib, _ in rows:
        assert 0 < need.total <= need.budget_share * gib


def test_a_32b_model_with_a_40960_token_context_on_one_80gb_gpu_is_refused():
    """The defect: no tensor parallelism for the 32B pool models (61 GiB of weights plus
    10 GiB for one 40,960-token sequence, over 90% of an 80 GB GPU)."""
    cfg = evolve_cfg()
    for entry in cfg["evolve"]["pool"]["models"]:
        entry.pop("backend", None)
    with pytest.raises(UserError) as err:
        gpu_memory.check(cfg)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("resources.generate: rule evolve_pool_generate (qwen3-32b) needs ~")
    assert "but asks for 1 x h100 (80 GiB)" in message and "tensor_parallel_size" in message


def test_full_fine_tuning_on_a_48gb_gpu_is_refused_at_the_start_in_one_line(tmp_path):
    proc = dry_run(
        tmp_path,
        "--configfile",
        str(REPO / "config/papers/evolve.yaml"),
        "--config",
        "resources={'train': {'gpu_model': 'l40s'}}",
    )
    assert proc.returncode != 0
    lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.startswith("Resources error:")]
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("Resources error: resources.train: rule evolve_grpo needs ~")
    assert (
        "full fine-tuning of qwen3-4b in float32 (computing in bfloat16)" in lines[0]
        and "1 x l40s (45 GiB)" in lines[0]
    )
    assert "Traceback" not in proc.stderr


def test_gpu_names_and_an_unknown_one():
    assert gpu_memory.gpu_of({"gpu_model": "A100-80GB"}, "train")[0] == 80
    assert gpu_memory.gpu_of({"gpu_model": "a100"}, "train")[0] == 40  # ambiguous: the smaller
    assert gpu_memory.gpu_of({"gpu_mem_gib": 94, "gpu_model": "site_gpu"}, "train")[0] == 94
    gib, named, said = gpu_memory.gpu_of({}, "generate")
    assert not said and gib == max(gpu_memory.GPU_MIB.values()) / 1024 and "largest" in named
    with pytest.raises(
        UserError, match=r"^resources.train.gpu_model: 'site_gpu' is not in the plan's GPU table"
    ):
        gpu_memory.gpu_of({"gpu_model": "site_gpu"}, "train")


def test_a_downloaded_models_config_json_is_read(tmp_path):
    folder = tmp_path / "resources/models/m"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(
        '{"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, '
        '"num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000, '
        '"tie_word_embeddings": true}'
    )
    arch = gpu_memory.architecture({"name": "m", "source": "hf", "path": "Qwen/Qwen3-32B"}, str(folder))
    assert (arch.layers, arch.kv_heads, arch.head_dim) == (2, 2, 16)
    # 2 layers x (attention 2*64*64 + 2*64*32, MLP 3*64*128) + tied embeddings 1000*64
    assert arch.params_b * 1e9 == pytest.approx(2 * (8192 + 4096 + 24576) + 64000)
    # not downloaded: the table (Qwen3-32B's published config: 64 layers, 8 KV heads)
    arch = gpu_memory.architecture(
        {"name": "m", "source": "hf", "path": "Qwen/Qwen3-32B"}, str(tmp_path / "none")
    )
    assert (arch.layers, arch.kv_heads, arch.params_b) == (64, 8, 32.8)


def test_a_model_whose_size_is_not_known_yet_is_named_not_refused(tmp_path):
    """The rehearsals' tiny models are folders the run writes before Snakemake starts: a
    plan without them names the jobs it could not check instead of refusing the config."""
    cfg = evolve_cfg()
    cfg["model"] = {"name": "tiny-x", "source": "local", "path": str(tmp_path / "not-yet")}
    unchecked = []
    rows = gpu_memory.check(cfg, unchecked=unchecked)
    assert any(
        line.startswith("resources.train: rule evolve_grpo not checked: model 'tiny-x'") for line in unchecked
    )
    assert {n.rule for n, _, _ in rows} >= {"evolve_pool_generate (qwen3-32b)"}
    # once the folder exists, its config.json is read and the job is checked
    (tmp_path / "not-yet").mkdir()
    (tmp_path / "not-yet" / "config.json").write_text(
        '{"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000}'
    )
    unchecked = []
    rows = gpu_memory.check(cfg, unchecked=unchecked)
    assert not unchecked and "evolve_grpo" in {n.rule for n, _, _ in rows}


def test_a_translator_left_null_is_the_games_model(tmp_path):
    """seq.translate.model: null (documented: the game's model translates) used to crash
    every plan with an AttributeError on None."""
    cfg = load_as_snakemake(["config/papers/seq.yaml"])
    cfg["seq"]["translate"]["model"] = None
    needs = {n.rule: n for n in gpu_memory.gpu_jobs(cfg, str(tmp_path))}
    assert needs["seq_translate_generate"].model == cfg["model"]["name"]


def test_full_fine_tuning_under_fsdp_holds_one_share_of_the_state_per_gpu():
    arch = gpu_memory.architecture({"name": "qwen3-4b", "source": "hf", "path": "Qwen/Qwen3-4B"})
    common = dict(finetune="full", dtype="float32", micro_batch=1, seq_len=4096, checkpointing=True)
    whole = gpu_memory.training_need("r", "train", {"name": "qwen3-4b"}, arch, gpus=4, **common)
    shard = gpu_memory.training_need("r", "train", {"name": "qwen3-4b"}, arch, gpus=4, sharded=True, **common)
    state = whole.parts["weights, grads, AdamW moments"]
    assert shard.parts["weights, grads, AdamW moments (1/4)"] == pytest.approx(state / 4)
    # while a layer computes FSDP holds it whole: two layers' weights, far below the state
    assert 0 < shard.parts["layers gathered whole (2)"] < state / 20
    assert "FSDP full shard over 4 GPUs" in shard.what and "FSDP" not in whole.what
    one = gpu_memory.training_need("r", "train", {"name": "qwen3-4b"}, arch, gpus=1, sharded=True, **common)
    assert one.parts == whole.parts  # one GPU: nothing to shard over


def test_evolve_grpo_on_several_gpus_is_planned_as_fsdp_sharded():
    def grpo(gpus):
        cfg = evolve_cfg([f"resources={{'train': {{'gpu': {gpus}, 'gpu_model': 'h200'}}}}"])
        return next(n for n, _, _ in gpu_memory.check(cfg) if n.rule == "evolve_grpo")

    one, four = grpo(1), grpo(4)
    assert "FSDP" not in one.what and "FSDP full shard over 4 GPUs" in four.what
    assert four.total < one.total - 40  # 4B x 16 bytes = ~60 GiB of state, a quarter per GPU


def _grpo_needs(**grpo):
    cfg = evolve_cfg()
    cfg["evolve"]["grpo"].update(grpo)
    return {n.rule: n for n, _, _ in gpu_memory.check(cfg) if n.rule.startswith("evolve_grpo")}


def test_grpo_with_colocated_vllm_checks_the_engine_s_share_and_the_trainer_s_rest():
    needs = _grpo_needs()  # paper 002: vLLM colocated, 0.4 of the H200, asleep while training
    engine, trainer = needs["evolve_grpo (its colocated vLLM engine)"], needs["evolve_grpo"]
    assert engine.budget_share == 0.4 and "kv cache (8 rollouts x 36,864 tokens)" in engine.parts
    # the rollouts' KV cache lives in the engine, not in the trainer's memory
    assert not any(k.startswith("kv cache") for k in trainer.parts)
    assert trainer.parts["vLLM asleep (its CUDA context)"] > 0 and trainer.budget_share == 1.0


def test_an_awake_colocated_engine_leaves_training_the_rest_of_the_gpu():
    with pytest.raises(UserError) as err:
        _grpo_needs(vllm_sleep_mode=False)
    assert "rule evolve_grpo needs" in str(err.value)
    assert "(60% of it for training beside the colocated vLLM engine)" in str(err.value)


def test_a_colocated_engine_share_too_small_for_the_rollouts_is_refused():
    with pytest.raises(UserError) as err:
        _grpo_needs(vllm_gpu_memory_utilization=0.2)
    assert "rule evolve_grpo (its colocated vLLM engine) needs" in str(err.value)
    assert "(20% of it for vLLM)" in str(err.value) and "raise vllm_gpu_memory_utilization" in str(err.value)


def test_grpo_rollouts_from_the_trainer_s_generate_hold_their_kv_cache_in_training_memory():
    needs = _grpo_needs(rollout_engine="transformers")
    assert list(needs) == ["evolve_grpo"]
    assert any(k.startswith("kv cache (8 rollouts") for k in needs["evolve_grpo"].parts)
