"""Where the PSV track's files live (pipeline/psv.py describes them); the rules' input
functions and the reports ask here, so the layout is written once.

Run = (setting S, method M, run seed R). The base model solving the seed set at
iteration 0 is method ``base``'s ``iter0`` and is shared by every loop method of S; so
is theta_1 (``base/seedR/model1``), trained on it, for every method whose training set
is built the shared way (psv.rft): RFT and PSV differ only from the first proposals on.
"""

from __future__ import annotations

from ...layout import exp_dir
from .methods import BUILT_IN, method_settings, train_settings


def root(cfg: dict) -> str:
    """The PSV run's folder (selfplay.layout: every track's run folder)."""
    return exp_dir(cfg, "psv")


def problem_set(cfg: dict, name: str) -> str:
    return f"{root(cfg)}/problems/{name}.jsonl"


def run_dir(cfg: dict, setting: str, method: str, seed) -> str:
    return f"{root(cfg)}/{setting}/{method}/seed{seed}"


def iteration_dir(cfg: dict, setting: str, method: str, seed, t: int) -> str:
    """Where iteration t's solving happens: the shared base run for t = 0."""
    return f"{run_dir(cfg, setting, 'base' if t == 0 else method, seed)}/iter{t}"


def solutions(cfg: dict, setting: str, method: str, seed, t: int) -> str:
    return f"{iteration_dir(cfg, setting, method, seed, t)}/solutions.jsonl"


def pool(cfg: dict, setting: str, method: str, seed, t: int) -> str:
    """X_t: the seed set at t = 0 and for methods that do not propose."""
    if t == 0 or method in BUILT_IN or not method_settings(cfg, method)["propose"]:
        return problem_set(cfg, cfg["psv"]["settings"][setting]["seed_set"])
    return f"{run_dir(cfg, setting, method, seed)}/iter{t}/pool.jsonl"


def proposals(cfg: dict, setting: str, method: str, seed, t: int) -> str:
    return f"{run_dir(cfg, setting, method, seed)}/iter{t}/proposals.jsonl"


def owner(cfg: dict, method: str, t: int) -> str:
    """The method whose files hold ``method``'s theta_t: ``base`` for theta_0, and for
    theta_1 when the method builds its first training set the shared way."""
    if method in BUILT_IN:
        return "base" if method == "base" or t > 0 else method
    if t == 0 or (t == 1 and train_settings(cfg, method) == train_settings(cfg, "base")):
        return "base"
    return method


def adapter(cfg: dict, setting: str, method: str, seed, t: int) -> str | None:
    """theta_t's adapter folder (None: the base model)."""
    return None if t == 0 else f"{run_dir(cfg, setting, owner(cfg, method, t), seed)}/model{t}/adapter"


def trainset(cfg: dict, setting: str, method: str, seed, t: int) -> str:
    return f"{run_dir(cfg, setting, owner(cfg, method, t), seed)}/model{t}/train_solver.jsonl"


def scores(cfg: dict, setting: str, method: str, seed, t: int, eval_set: str) -> str:
    """Evaluation of theta_t (the prompting baseline is its own, though it is theta_0)."""
    who = "fewshot" if method == "fewshot" else owner(cfg, method, t)
    return f"{run_dir(cfg, setting, who, seed)}/model{t}/eval_{eval_set}/scores.jsonl"


def iterations(cfg: dict, method: str) -> int:
    return 0 if method in BUILT_IN else int(method_settings(cfg, method)["iterations"])


def evaluated_models(cfg: dict, method: str) -> list[int]:
    """The t of every theta_t evaluated for a method (0 for the baselines)."""
    last = iterations(cfg, method)
    if last == 0:
        return [0]
    return list(range(1, last + 1)) if cfg["psv"]["evaluation"]["every_iteration"] else [last]


def score_files(cfg: dict, methods: list[str]) -> dict[tuple, str]:
    """(setting, method, seed, t, eval set) -> scores file, for every evaluated model."""
    out = {}
    psv = cfg["psv"]
    for setting, s in psv["settings"].items():
        for method in methods:
            for seed in psv["seeds"]:
                for t in evaluated_models(cfg, method):
                    for e in s["eval_sets"]:
                        out[(setting, method, seed, t, e)] = scores(cfg, setting, method, seed, t, e)
    return out


def yield_files(cfg: dict, methods: list[str]) -> dict[tuple, dict[int, dict]]:
    """(setting, method, seed) -> {t: {"solutions", "proposals"}} for every loop method."""
    out = {}
    psv = cfg["psv"]
    for setting in psv["settings"]:
        for method in methods:
            if method in BUILT_IN:
                continue
            ms = method_settings(cfg, method)
            for seed in psv["seeds"]:
                iters = {}
                for t in range(int(ms["iterations"])):
                    proposes = ms["propose"] and t < int(ms["iterations"]) - 1
                    iters[t] = {
                        "solutions": solutions(cfg, setting, method, seed, t),
                        "proposals": proposals(cfg, setting, method, seed, t) if proposes else None,
                    }
                out[(setting, method, seed)] = iters
    return out


# --- Table 6: other models trained on one run's verified solutions ----------------

BASELINE = "Baseline"


def table6_dir(cfg: dict) -> str:
    return f"{root(cfg)}/table6"


def table6_sources(cfg: dict, condition: str) -> list[str]:
    """The solutions files of every iteration of the first seed's run of the condition's setting."""
    t6 = cfg["psv"]["table6"]
    setting, method, seed = t6["conditions"][condition], t6["method"], cfg["psv"]["seeds"][0]
    return [solutions(cfg, setting, method, seed, t) for t in range(iterations(cfg, method))]


def table6_scores(cfg: dict) -> dict[tuple, str]:
    """(model name, condition, eval set) -> scores file."""
    t6 = cfg["psv"]["table6"]
    return {
        (m["name"], c, e): f"{table6_dir(cfg)}/{m['name']}/{c}/eval_{e}/scores.jsonl"
        for m in t6["models"]
        for c in [BASELINE, *t6["conditions"]]
        for e in t6["eval_sets"]
    }


# --- what a run builds ----------------------------------------------------------------

# Every PSV table and figure (`snakemake psv_all`); `all` builds REPORT, the ones that need
# no self-play runs beyond Table 1's methods.
EVERYTHING = [f"results/tables/psv/table{i}.{ext}" for i in (1, 2, 3, 6) for ext in ("csv", "md")] + [
    f"results/figures/psv/figure{i}.{ext}" for i in (1, 4, 5, 6) for ext in ("png", "pdf")
]
REPORT = [
    "results/tables/psv/table1.csv",
    "results/tables/psv/table1.md",
    "results/tables/psv/yield.csv",
    "results/tables/psv/yield.md",
    "results/figures/psv/figure1.png",
    "results/figures/psv/figure1.pdf",
    "results/figures/psv/figure4.png",
    "results/figures/psv/figure4.pdf",
]


def bundle_files(cfg: dict) -> dict[str, list[str]]:
    """The run's files for a bundle, by part (rules/common.smk's track_bundle_parts adds the
    logs): Table 1's methods' recordings, verdicts, training sets and adapters."""
    psv = cfg["psv"]
    methods = psv["tables"]["table1"]
    loops = [m for m in methods if m not in BUILT_IN]
    runs = [it for iters in yield_files(cfg, methods).values() for it in iters.values()]
    scored = list(score_files(cfg, methods).values())
    models = [
        (s, m, r, t)
        for s in psv["settings"]
        for m in loops
        for r in psv["seeds"]
        for t in range(1, iterations(cfg, m) + 1)
    ]
    return {
        # a downloaded set goes into a bundle only when its config says it may be redistributed
        "data": [
            problem_set(cfg, n)
            for n, v in psv["problem_sets"].items()
            if v["source"] == "embedded" or v.get("redistribute")
        ],
        "recordings": [it["solutions"].replace("solutions.jsonl", "solve.jsonl") for it in runs]
        + [it["proposals"].replace("proposals.jsonl", "propose.jsonl") for it in runs if it["proposals"]]
        + [p.replace("scores.jsonl", "generations.jsonl") for p in scored],
        "verdicts": [it[k] for it in runs for k in ("solutions", "proposals") if it[k]] + scored,
        "tables": [
            "results/tables/psv/table1.csv",
            "results/tables/psv/table1.md",
            "results/tables/psv/yield.csv",
            "results/tables/psv/yield.md",
            "results/tables/psv/yield_reasons.csv",
            "results/figures/psv/figure1.csv",
            "results/figures/psv/figure4.csv",
        ],
        "figures": [p for p in REPORT if p.startswith("results/figures/")],
        "trainsets": sorted({trainset(cfg, *model) for model in models}),
        "adapters": sorted({adapter(cfg, *model) for model in models}),
    }
