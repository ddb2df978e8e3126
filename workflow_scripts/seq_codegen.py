# Table 3's rules (the rule's name says which); each branch is one library call.
from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

rule, cfg, i, o, w = snakemake.rule, snakemake.config, snakemake.input, snakemake.output, snakemake.wildcards
with step(f"{rule} {w.bench}", snakemake.log[0], offline=rule != "seq_download_multipl_e") as log:
    if rule == "seq_download_multipl_e":
        seq.download(snakemake.params.url, o[0], snakemake.params.sha256, log)
    elif rule == "seq_codegen_problems":
        seq.codegen_problems(cfg, w.bench, optional_path(list(i)), o.problems, o.skipped)
    elif rule == "seq_codegen_generate":
        seq.codegen_generate(cfg, w.bench, w.agent, i.problems, snakemake.params.model_dir,
                             optional_path(i.adapter), o[0])
    elif rule == "seq_codegen_eval":
        seq.codegen_eval(cfg, i.problems, i.generations, o[0], workers=snakemake.threads)
    else:
        raise ValueError(f"seq_codegen.py does not handle rule {rule}")
