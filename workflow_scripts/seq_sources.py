# The Haskell track's source rules (the rule's name says which); each branch is one library call.
from selfplay.pipeline import seq
from selfplay.pipeline.step import step

rule, cfg, i, o = snakemake.rule, snakemake.config, snakemake.input, snakemake.output
with step(rule, snakemake.log[0], offline=rule != "seq_download") as log:
    if rule == "seq_reference_sources":
        seq.reference_sources(cfg, snakemake.wildcards.split, o.kept, o.rejected)
    elif rule == "seq_download":
        seq.download(snakemake.params.url, o[0], snakemake.params.sha256, log)
    elif rule == "seq_opinstruct_python":
        seq.opinstruct_python(cfg, i[0], o[0])
    elif rule == "seq_hsx_sources":
        seq.hsx_sources(cfg, i[0], snakemake.wildcards.split, o.kept, o.rejected)
    elif rule == "seq_opinstruct_sources":
        seq.translated_sources(i[0], snakemake.wildcards.split, o.kept, o.rejected)
    else:
        raise ValueError(f"seq_sources.py does not handle rule {rule}")
