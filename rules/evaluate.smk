# The shared benchmark layer (src/selfplay/evaluate, docs/evaluation.md): every track's
# extrinsic evaluation goes through these rules. Per benchmark: its data (shipped, from
# a pip package, downloaded by a pinned rule, or a path the user supplies for gated
# data) -> prepared items; per track, model and mode: samples (recorded) -> scored
# samples -> metrics. A track lists what it runs in <track>.benchmarks and builds its
# tables from the metrics files (eval_summary).

from selfplay.evaluate.shards import shard_count


rule eval_download:
    """One pinned file of a benchmark's release (needs network: runs on the machine that
    runs snakemake, never in the default run): its revision must be a commit or release
    tag, and its sha256 must match the pin (config, the adapter's spec, or the lock file
    config/download-pins.tsv, where a first download records what it saw)."""
    output:
        file="resources/downloads/eval/{bench}/{file}",
    log:
        "logs/eval/download_{bench}_{file}.log",
    wildcard_constraints:
        bench="|".join(ADAPTERS),
    localrule: True
    container:
        image("python")
    params:
        url=eval_download_param("url"),
        config_sha256=eval_download_param("config_sha256"),
        spec_sha256=eval_download_param("spec_sha256"),
        key=lambda w: f"{w.bench}/{w.file}",
        lock=DOWNLOAD_PINS,
    script:
        "../workflow_scripts/eval_download.py"


rule eval_supplied:
    """A benchmark file only the user can supply (gated data such as PySecDB): when it is
    missing, this fails and says how to obtain it and where to put it."""
    output:
        file="resources/supplied/eval/{bench}/{file}",
    log:
        "logs/eval/supplied_{bench}_{file}.log",
    wildcard_constraints:
        bench="|".join(ADAPTERS),
    localrule: True
    container:
        image("python")
    params:
        note=eval_source_note,
    script:
        "../workflow_scripts/eval_supplied.py"


for _image, _benches in EVAL_ITEM_IMAGES.items():

    rule:
        name:
            f"eval_items_{_image}"
        input:
            eval_source_input,
        output:
            prepared="resources/data/eval/{bench}.jsonl",
            skipped="resources/data/eval/{bench}.skipped.jsonl",
        log:
            "logs/eval/items_{bench}.log",
        benchmark:
            "benchmarks/eval/items_{bench}.tsv"
        wildcard_constraints:
            bench=_benches,
        container:
            image(_image)
        threads: 2
        params:
            cfg=eval_bench_cfg,
        script:
            "../workflow_scripts/eval_items.py"


# A benchmark with evaluation.benchmarks.<b>.shards = n > 1 has each cell a track's GPU
# jobs generate split into n jobs (<track>_eval_generate_shard: the items at positions
# k, k + n, ...), merged back in item order by a local job (<track>_eval_merge) into the
# file one job would write; scoring reads that (src/selfplay/evaluate/shards.py).
EVAL_SHARDS = {b: shard_count(config, b) for b in ADAPTERS}
EVAL_SHARDED = [b for b in ADAPTERS if EVAL_SHARDS[b] > 1]
EVAL_WHOLE = [b for b in ADAPTERS if EVAL_SHARDS[b] == 1]


for _track in LOADED_TRACKS:
    if "benchmarks" not in config[_track]:
        continue

    # A model the track loads runs on a GPU; one served elsewhere (other_models) is an
    # HTTP client: it holds no GPU and runs on the machine Snakemake runs on (a login
    # node), which reaches the public APIs and the server you start for a local model.
    # A client has no cluster time limit: its cells are one job whatever the shards.
    for _kind, _models in model_tags.wildcard_patterns(other_tags(config[_track]), EVAL_NAME).items():
        _client = _kind == "client"

        rule:
            name:
                f"{_track}_eval_generate" + ("_client" if _client else "")
            input:
                prepared="resources/data/eval/{bench}.jsonl",
                model=eval_model_input(_track),
                adapter=eval_adapter_input(_track),
            output:
                _eval_generate_rule(_track),
            log:
                f"{log_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}.log",
            benchmark:
                f"{bench_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}.tsv"
            wildcard_constraints:
                bench="|".join(ADAPTERS if _client else EVAL_WHOLE) or "^$",
                mode=EVAL_NAME,
                model=_models,
            localrule: _client
            container:
                image("python" if _client else "gpu")
            threads: 1 if _client else GENERATION_THREADS
            resources:
                **({} if _client else resources_of("generate")),
            params:
                cfg=eval_generate_cfg,
                model_dir=eval_model_param(_track),
                other=eval_other_param(_track),
            script:
                "../workflow_scripts/eval_generate.py"

        if _client or not EVAL_SHARDED:
            continue

        rule:
            name:
                f"{_track}_eval_generate_shard"
            input:
                prepared="resources/data/eval/{bench}.jsonl",
                model=eval_model_input(_track),
                adapter=eval_adapter_input(_track),
            output:
                eval_shard_file(_track),
            log:
                f"{log_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}_shard{{shard}}of{{shards}}.log",
            benchmark:
                f"{bench_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}_shard{{shard}}of{{shards}}.tsv"
            wildcard_constraints:
                bench="|".join(EVAL_SHARDED),
                mode=EVAL_NAME,
                model=_models,
                shard=r"\d+",
                shards=r"\d+",
            container:
                image("gpu")
            threads: GENERATION_THREADS
            resources:
                **resources_of("generate"),
            params:
                cfg=eval_generate_cfg,
                model_dir=eval_model_param(_track),
                other=eval_other_param(_track),
            script:
                "../workflow_scripts/eval_generate.py"

        rule:
            name:
                f"{_track}_eval_merge"
            input:
                prepared="resources/data/eval/{bench}.jsonl",
                shards=eval_shard_inputs(_track),
            output:
                _eval_generate_rule(_track),
            log:
                f"{log_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}_merge.log",
            wildcard_constraints:
                bench="|".join(EVAL_SHARDED),
                mode=EVAL_NAME,
                model=_models,
            localrule: True
            container:
                image("python")
            params:
                cfg=eval_merge_cfg,
            script:
                "../workflow_scripts/eval_merge.py"

    for _image, _benches in EVAL_IMAGES.items():

        rule:
            name:
                f"{_track}_eval_score_{_image}"
            input:
                prepared="resources/data/eval/{bench}.jsonl",
                skipped="resources/data/eval/{bench}.skipped.jsonl",
                generations=_eval_generate_rule(_track),
            output:
                scored=_eval_generate_rule(_track)[: -len(".jsonl")] + ".scored.jsonl",
                summary=_eval_generate_rule(_track)[: -len(".jsonl")] + ".json",
            log:
                f"{log_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}_score.log",
            benchmark:
                f"{bench_dir(_track)}/eval/{{bench}}_{{model}}_{{mode}}_score.tsv"
            wildcard_constraints:
                bench=_benches,
                mode=EVAL_NAME,
                model=EVAL_NAME,
            container:
                image(_image)
            threads: int(config["evaluation"]["workers"])
            resources:
                **resources_of("verify"),
            params:
                cfg=eval_score_cfg,
            script:
                "../workflow_scripts/eval_score.py"


rule eval_training_split:
    """Training problems of a benchmark that has a split (LiveCodeBench: contests before
    evaluation.benchmarks.livecodebench.train_before), for the RL tracks."""
    input:
        eval_source_input,
    output:
        prepared="resources/data/eval/{bench}.train.jsonl",
        skipped="resources/data/eval/{bench}.train.skipped.jsonl",
    log:
        "logs/eval/training_split_{bench}.log",
    wildcard_constraints:
        bench="livecodebench",
    container:
        image("python")
    params:
        cfg=eval_bench_cfg,
    script:
        "../workflow_scripts/eval_training_split.py"


# --- the layer's own check: right answers through each adapter, and the base model on
# benchmarks no track runs (results/tables/eval/benchmarks.md) ------------------------


for _image, _benches in EVAL_IMAGES.items():

    rule:
        name:
            f"eval_ground_truth_{_image}"
        input:
            prepared="resources/data/eval/{bench}.jsonl",
        output:
            scored="results/eval/ground_truth/{bench}.scored.jsonl",
            summary="results/eval/ground_truth/{bench}.json",
        log:
            "logs/eval/ground_truth_{bench}.log",
        wildcard_constraints:
            bench=_benches,
        container:
            image(_image)
        threads: int(config["evaluation"]["workers"])
        resources:
            **resources_of("verify"),
        params:
            cfg=eval_bench_cfg,
        script:
            "../workflow_scripts/eval_ground_truth.py"


rule eval_check_generate:
    input:
        prepared="resources/data/eval/{bench}.jsonl",
        model=generation_model_input,
    output:
        f"{EVAL_CHECK}/{{bench}}/base/greedy.jsonl",
    log:
        "logs/eval/check_{bench}.log",
    benchmark:
        "benchmarks/eval/check_{bench}.tsv"
    wildcard_constraints:
        bench="|".join(ADAPTERS),
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=eval_check_cfg,
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/eval_check_generate.py"


for _image, _benches in EVAL_IMAGES.items():

    rule:
        name:
            f"eval_check_score_{_image}"
        input:
            prepared="resources/data/eval/{bench}.jsonl",
            skipped="resources/data/eval/{bench}.skipped.jsonl",
            generations=f"{EVAL_CHECK}/{{bench}}/base/greedy.jsonl",
        output:
            scored=f"{EVAL_CHECK}/{{bench}}/base/greedy.scored.jsonl",
            summary=f"{EVAL_CHECK}/{{bench}}/base/greedy.json",
        log:
            "logs/eval/check_{bench}_score.log",
        wildcard_constraints:
            bench=_benches,
        container:
            image(_image)
        threads: int(config["evaluation"]["workers"])
        resources:
            **resources_of("verify"),
        params:
            cfg=eval_check_cfg,
        script:
            "../workflow_scripts/eval_check_score.py"


rule eval_benchmarks_table:
    input:
        **{f"gt_{b}": f"results/eval/ground_truth/{b}.json" for b in EVAL["check"]["benchmarks"]},
        **{f"skipped_{b}": f"resources/data/eval/{b}.skipped.jsonl" for b in EVAL["check"]["benchmarks"]},
        **{f"base_{b}": f"{EVAL_CHECK}/{b}/base/greedy.json" for b in EVAL["check"]["base_model"]},
    output:
        csv=report(
            "results/tables/eval/benchmarks.csv",
            caption="../report/eval_benchmarks.rst",
            category="Benchmark layer",
            labels={"table": "Adapters and their ground truth (CSV)"},
        ),
        md=report(
            "results/tables/eval/benchmarks.md",
            caption="../report/eval_benchmarks.rst",
            category="Benchmark layer",
            labels={"table": "Adapters and their ground truth"},
        ),
    log:
        "logs/eval/benchmarks_table.log",
    container:
        image("python")
    params:
        sources={
            b: EVAL["benchmarks"][b]["source"]
            for b in sorted(set(EVAL["check"]["benchmarks"]) | set(EVAL["check"]["base_model"]))
        },
    script:
        "../workflow_scripts/eval_benchmarks_table.py"
