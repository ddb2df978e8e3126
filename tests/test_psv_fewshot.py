"""The AlphaVerus-style prompting baseline fits its context (config psv.fewshot).

Paper 003 asks for 50 in-domain worked examples; 50 Verus examples do not fit an
8,192-token context with a 2,048-token answer. Each problem's prompt gets the examples
that fit, counted with the model's own tokenizer and chat template (here the tiny
model's), in problem-id order; the records say how many; a problem that no example
fits is a one-line error naming the key. Exemplars are realistic Verus: the verified
solutions of tests/verus_corpus and the shipped worked example, as body-format answers."""

from __future__ import annotations

from pathlib import Path

import pytest
import transformers

from selfplay.errors import UserError
from selfplay.pipeline import psv
from selfplay.records import write_jsonl
from selfplay.tracks.psv import prompts
from selfplay.verus.spec import inspect_spec

CORPUS = Path(__file__).parent / "verus_corpus"
PAIRS = [
    ("spec_max.rs", "max_honest.rs"),
    ("spec_max.rs", "max_loop_isolation.rs"),
    ("spec_max.rs", "max_helper_lemma.rs"),
    ("spec_double.rs", "double_honest.rs"),
    ("spec_swap.rs", "swap_honest.rs"),
]
BUDGET_8K = 8192 - 2048


def _verus_examples() -> list[tuple[str, str]]:
    """(spec, body) of each verified corpus solution and of the shipped worked example."""
    out = []
    for spec_file, sol_file in PAIRS:
        spec = (CORPUS / spec_file).read_text()
        solution = (CORPUS / sol_file).read_text()
        name = inspect_spec(spec)[0].target_name
        target = next(
            d for d in inspect_spec(solution.replace("fn main() {}", ""))[0].program.items if d.name == name
        )
        out.append((spec, solution[target.body[0] : target.body[1]]))
    out.append((prompts.EXAMPLE_SPEC["verus"] + "\n", prompts.EXAMPLE_BODY["verus"]))
    return out


def _problems(n: int) -> list[dict]:
    """n distinct Verus problems with a verified body each (the corpus's, renamed)."""
    examples = _verus_examples()
    rows = []
    for k in range(n):
        spec, body = examples[k % len(examples)]
        name = inspect_spec(spec)[0].target_name
        rows.append({"id": f"p{k:02d}", "spec": spec.replace(f"fn {name}(", f"fn {name}_{k}("), "body": body})
    return rows


@pytest.fixture(scope="module")
def counter(tiny_model_dir):
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model_dir))

    def count(messages):
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return len(tok(text, add_special_tokens=False)["input_ids"])

    return count


def _cfg(fewshot: dict, max_new_tokens: int = 2048) -> dict:
    return {
        "seed": 3,
        "model": {"name": "tiny", "source": "local", "path": "unused"},
        "backend": {"name": "vllm", "max_model_len": 8192},
        "psv": {
            "language": "verus",
            "fewshot": fewshot,
            "solve": {"answer_format": {"constrained": False}, "completion": "body"},
            "evaluation": {
                "samples": 1,
                "sampling": {"temperature": 0.8, "top_p": 1.0, "max_new_tokens": max_new_tokens},
            },
        },
    }


def _run(tmp_path, monkeypatch, cfg, model_dir, problems, evaluated):
    seen = {}

    def fake_generate(cfg, model_dir, requests, metas, out, what):
        seen.update(cfg=cfg, requests=requests, metas=metas)

    monkeypatch.setattr(psv, "generate_to_file", fake_generate)
    sols = tmp_path / "seed_solutions.jsonl"
    write_jsonl(
        sols,
        [
            {
                "problem_id": p["id"],
                "spec": p["spec"],
                "samples": [{"verified": True, "solution": "unused", "answer": p["body"]}],
            }
            for p in problems
        ],
    )
    todo = tmp_path / "eval.jsonl"
    write_jsonl(todo, [{"id": p["id"], "spec": p["spec"]} for p in evaluated])
    psv.eval_generate(cfg, "fewshot", str(todo), str(model_dir), None, str(tmp_path / "out.jsonl"), str(sols))
    return seen


def test_fifty_verus_examples_overflow_8k_and_each_prompt_now_fits(
    tmp_path, monkeypatch, tiny_model_dir, counter
):
    problems = _problems(51)
    evaluated = [problems[0], {"id": "zz", "spec": problems[3]["spec"].replace("_3(", "_new("), "body": ""}]
    # what the baseline used to send: the first 50 others, whatever their length
    old = prompts.solver_messages(
        "verus", evaluated[0]["spec"], [(p["spec"], p["body"]) for p in problems[1:51]], "body"
    )
    assert counter(old) > BUDGET_8K
    seen = _run(tmp_path, monkeypatch, _cfg({"exemplars": 50}), tiny_model_dir, problems, evaluated)
    for req, meta, p in zip(seen["requests"], seen["metas"], evaluated):
        tokens = counter(req.messages)
        assert tokens <= BUDGET_8K and tokens == meta["prompt_tokens"] and meta["context_tokens"] == 8192
        assert 1 <= meta["exemplars"] < 50 and len(req.messages) == 2 + 2 * meta["exemplars"]
        assert p["id"] not in meta["exemplar_ids"] and meta["exemplar_ids"] == sorted(meta["exemplar_ids"])
        # the rule: in id order, each that still fits; stopping early means the next did not fit
        assert meta["exemplars_passed_over"] >= 1
        assert req.messages[-1]["content"].endswith(prompts.block("verus", p["spec"]))


def test_the_papers_context_holds_all_fifty(tmp_path, monkeypatch, tiny_model_dir, counter):
    problems = _problems(51)
    seen = _run(
        tmp_path,
        monkeypatch,
        _cfg({"exemplars": 50, "max_model_len": 32768}),
        tiny_model_dir,
        problems,
        [problems[7]],
    )
    meta, req = seen["metas"][0], seen["requests"][0]
    assert (
        meta["exemplars"] == 50 and meta["exemplars_passed_over"] == 0 and "p07" not in meta["exemplar_ids"]
    )
    assert counter(req.messages) <= 32768 - 2048 and meta["context_tokens"] == 32768
    assert seen["cfg"]["backend"]["max_model_len"] == 32768  # the engine is started with that context


def test_a_problem_no_example_fits_is_a_one_line_error_naming_the_key(
    tmp_path, monkeypatch, tiny_model_dir, counter
):
    problems = _problems(6)
    framed = prompts.solver_messages("verus", problems[0]["spec"], [("", "")], "body")
    own = counter([framed[0], framed[-1]])
    with pytest.raises(UserError, match=r"psv\.fewshot\.max_model_len") as err:
        _run(
            tmp_path,
            monkeypatch,
            _cfg({"exemplars": 50, "max_model_len": 2048 + own + 10}),
            tiny_model_dir,
            problems,
            [problems[0]],
        )
    assert "\n" not in str(err.value) and "p00" in str(err.value)
    with pytest.raises(UserError, match=r"own prompt takes \d+ tokens"):
        _run(
            tmp_path,
            monkeypatch,
            _cfg({"exemplars": 50, "max_model_len": 2048 + own - 1}),
            tiny_model_dir,
            problems,
            [problems[0]],
        )
