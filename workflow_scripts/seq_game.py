# One script for the per-stage, per-shard rules of the Haskell track (the rule's name
# says which step); each branch is one library call.
from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

cfg, rule, w, i, o = snakemake.config, snakemake.rule, snakemake.wildcards, snakemake.input, snakemake.output
with step(f"{rule} {w.stage} shard {w.shard}", snakemake.log[0]):
    if rule == "seq_alice_generate":
        seq.alice_generate(cfg, w.stage, int(w.shard), i.sources, snakemake.params.model_dir,
                           optional_path(i.adapter), o[0])
    elif rule == "seq_check":
        seq.check_programs(cfg, w.stage, i.generations, i.sources, o[0], workers=snakemake.threads)
    elif rule == "seq_proof_generate":
        seq.proof_generate(cfg, w.stage, int(w.attempt), i.checked, optional_path(i.previous),
                           snakemake.params.model_dir, optional_path(i.adapter), o[0])
    elif rule == "seq_proof_check":
        seq.proof_check(cfg, int(w.attempt), i.generations, i.checked, o[0])
    elif rule == "seq_settle":
        seq.settle_candidates(cfg, i.checked, list(i.checks), o[0])
    elif rule == "seq_bob_generate":
        seq.bob_generate(cfg, w.stage, w.who, i.candidates, snakemake.params.model_dir, optional_path(i.adapter),
                         o[0])
    elif rule == "seq_label":
        seq.label_instances(cfg, w.stage, w.who, i.candidates, i.bob, o[0])
    else:
        raise ValueError(f"seq_game.py does not handle rule {rule}")
