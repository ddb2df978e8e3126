# LoRA training of every track's agents, written once. Alice trains after each round
# from the base model on the accumulated set (the previous round's adapter is kept when
# a round gives no examples); Bob trains once, after the last round. Each track's rules
# file writes the training sets these rules read. With config replay_training_from the
# rules restore a bundle's training records instead and need no model (docs/bundle.md).


wildcard_constraints:
    track="|".join(LOADED_TRACKS),
    experiment=r"[A-Za-z0-9._-]+",
    stage=r"round[1-9][0-9]*|eval_train|eval_test",
    shard=r"[0-9]+",
    who=r"untrained|trained",
    r=r"[1-9][0-9]*",
    split=r"train|test",


rule train_alice:
    input:
        trainset="results/{track}/{experiment}/round{r}/train_alice.jsonl",
        model=training_model_input,
        previous=lambda w: [] if w.r == "1" else alice_adapter(w.track, int(w.r) - 1),
        restored=training_restore_input("results/{track}/{experiment}/round{r}/adapter_alice"),
    output:
        directory("results/{track}/{experiment}/round{r}/adapter_alice"),
    log:
        "logs/{track}/{experiment}/round{r}/train_alice.log",
    benchmark:
        "benchmarks/{track}/{experiment}/round{r}/train_alice.tsv"
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        cfg=lambda w: cfg_of("seed", f"{w.track}.training.alice", "backend.name"),
        model_dir=training_model_param,
        agent="alice",
        gpus=train_gpus(),
        tag=lambda w: f"round{w.r}",
    script:
        "../workflow_scripts/train_agent.py"


rule train_bob:
    input:
        trainset="results/{track}/{experiment}/bob/train_bob.jsonl",
        model=training_model_input,
        restored=training_restore_input("results/{track}/{experiment}/bob/adapter"),
    output:
        directory("results/{track}/{experiment}/bob/adapter"),
    log:
        "logs/{track}/{experiment}/bob/train_bob.log",
    benchmark:
        "benchmarks/{track}/{experiment}/bob/train_bob.tsv"
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        cfg=lambda w: cfg_of("seed", f"{w.track}.training.bob", "backend.name"),
        model_dir=training_model_param,
        agent="bob",
        gpus=train_gpus(),
        tag="final",
    script:
        "../workflow_scripts/train_agent.py"
