"""What a benchmark adapter is: prepared items, prompts in our words, answer reading,
scoring, and the metrics its papers report.

Every adapter goes through the same four steps, each a workflow rule over files:

1. ``prepare``: the benchmark's own data (a download, a pip package's file, or the smoke
   set this project ships in the benchmark's format) -> prepared items
   (``resources/data/eval/<bench>.jsonl``), one JSON object per item with an ``id``, a
   ``group`` (a category such as EquiBench's OJ_A, or null) and what scoring needs. Rows
   that cannot be used are returned with a reason, never silently dropped.
2. ``messages`` / ``answer_format``: one chat prompt per item, with or without a request
   to reason step by step first; the generation backends sample it (and record it, so
   bundles replay it).
3. ``score``: every sample -> one scored row (the answer read from it, whether it is
   right, why not). Model-written code is run only in the sandbox, and whether it passed
   is decided here, in the host process, from the values it returned.
4. ``summarise``: the scored rows of one mode -> the metrics (overall and per group).
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass
from typing import ClassVar

from ..llm.answer_format import AnswerFormat, fenced_body, lark_string
from ..llm.reasoning import final_answer
from ..metrics import pass_at_ks
from ..metrics.classification import binary_scores, majority_vote
from .modes import EvalMode


@dataclass(frozen=True)
class Sample:
    """One model answer: the item it answers, its index among the item's samples, the text."""

    item_id: str
    index: int
    text: str


class Benchmark(abc.ABC):
    """The part every adapter shares: an abstract interface. Subclasses set the class
    attributes and implement ``prepare``, ``messages``, ``score`` and ``summarise``
    (ClassificationBenchmark and CodegenBenchmark implement the last two or three)."""

    name: ClassVar[str]  # registry key and file name
    title: ClassVar[str]  # how tables name it
    task: ClassVar[str]  # "classify" or "codegen"
    # The file of this project's own smoke items (under selfplay/data/eval), in the
    # benchmark's exact format; None when a pip package ships the real data instead.
    smoke: ClassVar[str | None] = None
    # The tools whose versions the metrics file records (scoring runs them).
    tools: ClassVar[tuple[str, ...]] = ("python",)
    # Whether an installed pip package ships the real data (source: package).
    package: ClassVar[bool] = False
    # What the paper-scale data is and where it comes from (docs and error messages).
    source_note: ClassVar[str] = ""
    # The pinned release files a download rule fetches (source: download), each
    # {"url", "file", "sha256" (None: logged on first download, to pin in the config)}.
    downloads: ClassVar[tuple[dict, ...]] = ()
    # How many items the paper-scale data holds (an upper bound: rows the adapter skips
    # only lower it), for sizing generation jobs (evaluate/shards.py); None if unknown.
    release_items: ClassVar[int | None] = None

    @abc.abstractmethod
    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        """(items, skipped) from ``source`` (a downloaded file or folder; None: the shipped
        smoke set or package data). ``settings`` is config ``evaluation.benchmarks.<name>``."""

    @abc.abstractmethod
    def messages(self, item: dict, cot: bool) -> list[dict]:
        """The chat prompt of one item, asking for reasoning first when ``cot``."""

    def answer_format(self, item: dict, cot: bool) -> AnswerFormat | None:
        """The answer's skeleton for format-constrained decoding (None: free text)."""
        return None

    @abc.abstractmethod
    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        """One row per sample: at least ``id``, ``sample`` and ``reason`` (None when right)."""

    @abc.abstractmethod
    def summarise(self, items: dict[str, dict], rows: list[dict], mode: EvalMode) -> dict:
        """The metrics of one mode's scored rows, overall and per group."""

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        """The benchmark's own right answers, as model answers would be written (the gold
        label; a reference solution in a code block), for the ground-truth check: scored
        like any sample, they must all be right. None when the benchmark ships none."""
        return None


def unrunnable(item_id, reason: str) -> dict:
    """A skipped row for an item that belongs to the benchmark but cannot run here (its
    reference fails, its libraries are missing): unlike rows outside the benchmark
    (beyond a limit, outside a date window), it counts as failed in the official pass@k."""
    return {"id": item_id, "reason": reason, "counts": True}


_FENCE_LINE = re.compile(r"^```[ \t]*([A-Za-z0-9_+-]*)[ \t]*$")


def fenced_blocks(text: str, labels: tuple[str, ...]) -> tuple[list[str], tuple[str, str] | None]:
    """The bodies of the closed fenced blocks of ``text`` labelled one of ``labels`` (or
    unlabelled), in order, and the block still open at the end as (label, body), or None.
    A labelled fence while a block is open starts a new block."""
    lines = text.split("\n")
    blocks, open_at, label = [], None, ""
    for i, line in enumerate(lines):
        m = _FENCE_LINE.match(line.strip())
        if not m:
            continue
        if open_at is None or m.group(1) != "":
            open_at, label = i, m.group(1).lower()
            continue
        if label in labels or label == "":
            blocks.append("\n".join(lines[open_at + 1 : i]))
        open_at = None
    return blocks, (None if open_at is None else (label, "\n".join(lines[open_at + 1 :])))


def fenced(code: str, language: str = "python") -> str:
    return f"```{language}\n{code.rstrip()}\n```\n"


# --- classification -------------------------------------------------------------


class ClassificationBenchmark(Benchmark):
    """Pick one of ``labels``; ``positive`` is the label precision, recall and F1 are about.

    The prompt ends with an instruction to answer with one label (plain mode), or to
    reason first and finish with a line ``Answer: <label>`` (chain of thought). Reading
    an answer: in plain mode the first label the text mentions; in chain-of-thought mode
    the label on the last ``Answer:`` line (without one, the last label mentioned).
    """

    task = "classify"
    labels: ClassVar[tuple[str, ...]]
    positive: ClassVar[str]
    # Under format-constrained decoding, the most characters of reasoning before the
    # answer marker, so a chain-of-thought answer ends within its token budget.
    reasoning_chars: ClassVar[int] = 200

    def gold(self, item: dict) -> str:
        return item["label"]

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        return [Sample(i["id"], 0, self.gold(i)) for i in items]

    def answer_instruction(self, cot: bool) -> str:
        choices = " or ".join(self.labels)
        if cot:
            return (
                f"Think it through step by step first. Then finish with one last line of the form "
                f"`Answer: X`, where X is {choices}."
            )
        return f"Reply with just one word: {choices}."

    def answer_format(self, item: dict, cot: bool) -> AnswerFormat | None:
        choice = " | ".join(lark_string(label) for label in self.labels)
        if cot:
            # Free reasoning up to and including the first answer marker, as ONE terminal:
            # llguidance lexes greedily and gives no characters back, so a reasoning
            # terminal of its own would read on into the marker and fail at its colon.
            grammar = (
                "start: REASONED label\n"
                f"label: {choice}\n"
                "REASONED: /([^A]|A[^n]|An[^s]|Ans[^w]|Answ[^e]|Answe[^r]|Answer[^:])"
                f"{{0,{self.reasoning_chars}}}Answer: /\n"
            )
        else:
            grammar = f"start: label\nlabel: {choice}\n"
        return AnswerFormat(f"{self.name}:{'cot' if cot else 'plain'}", grammar)

    def read_label(self, text: str, cot: bool) -> tuple[str | None, str | None]:
        """(label, None) or (None, reason). A reasoning model's thinking is not its answer
        (paper 000's evaluated model writes it first, full of "yes" and "no"): only what
        follows it is read."""
        text = final_answer(text)
        pattern = re.compile(
            r"\b(" + "|".join(re.escape(label) for label in self.labels) + r")\b", re.IGNORECASE
        )
        canon = {label.lower(): label for label in self.labels}
        if cot:
            finals = re.findall(r"(?im)^\W*answer\s*:\s*\W*(\w+)", text)
            for word in reversed(finals):
                if word.lower() in canon:
                    return canon[word.lower()], None
            found = pattern.findall(text)
            return (canon[found[-1].lower()], None) if found else (None, "no_label")
        found = pattern.search(text)
        return (canon[found.group(1).lower()], None) if found else (None, "no_label")

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        rows = []
        for s in samples:
            label, reason = self.read_label(s.text, mode.cot)
            gold = self.gold(items[s.item_id])
            rows.append(
                {
                    "id": s.item_id,
                    "sample": s.index,
                    "answer": label,
                    "gold": gold,
                    "correct": label == gold,
                    "reason": reason if label is None else (None if label == gold else "wrong_label"),
                }
            )
        return rows

    def summarise(self, items: dict[str, dict], rows: list[dict], mode: EvalMode) -> dict:
        by_item: dict[str, list[dict]] = {}
        for row in sorted(rows, key=lambda r: (r["id"], r["sample"])):
            by_item.setdefault(row["id"], []).append(row)
        groups = sorted({items[i].get("group") for i in by_item if items[i].get("group") is not None})

        def scores(ids: list[str]) -> dict:
            gold = [self.gold(items[i]) for i in ids]
            if mode.aggregate == "mean":
                runs = [
                    binary_scores(
                        gold,
                        [by_item[i][j]["answer"] if j < len(by_item[i]) else None for i in ids],
                        self.positive,
                    )
                    for j in range(mode.samples)
                ]
                return _mean_scores(runs)
            if mode.aggregate == "majority":
                predicted = [majority_vote([r["answer"] for r in by_item[i]]) for i in ids]
            else:
                predicted = [by_item[i][0]["answer"] for i in ids]
            return binary_scores(gold, predicted, self.positive)

        ids = sorted(by_item)
        out = {"metric": "classification", "positive": self.positive, "mode": mode.name, **scores(ids)}
        out["groups"] = {g: scores([i for i in ids if items[i].get("group") == g]) for g in groups}
        return out


def _mean_scores(runs: list[dict]) -> dict:
    """Each metric's mean over runs (runs where it is undefined are left out; None if all are)."""
    out = {"runs": len(runs), "n": runs[0]["n"] if runs else 0}
    for key in ("accuracy", "precision", "recall", "f1"):
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = sum(values) / len(values) if values else None
    out["unparsed"] = sum(r["unparsed"] for r in runs) / len(runs) if runs else 0
    return out


# --- code generation ----------------------------------------------------------


class CodegenBenchmark(Benchmark):
    """Write a program; a sample passes when every test of its item does. pass@k with the
    unbiased estimator for every k the mode asks (``pass_at_k``, each <= its samples).

    The denominator: the headline pass@k is the official one, where an item that cannot
    run here (a skipped row marked by :func:`unrunnable`) counts as an item whose samples
    all failed. ``runnable_only`` adds, labelled, pass@k over the items that ran."""

    task = "codegen"
    # The answer format (llm/answer_format.py): one fenced block in ``answer_language`` of
    # at most ``code_chars`` characters, after (chain of thought) at most
    # ``reasoning_chars`` characters of reasoning that open no fence. None: free text.
    answer_language: ClassVar[str] = "python"
    reasoning_chars: ClassVar[int | None] = None
    code_chars: ClassVar[int | None] = None

    def answer_format(self, item: dict, cot: bool) -> AnswerFormat | None:
        if self.code_chars is None:
            return None
        lead = f"/([^`]|`[^`]|``[^`]){{0,{self.reasoning_chars}}}/ " if cot else ""
        opening = lark_string("```" + self.answer_language + "\n")
        grammar = f"start: {lead}{opening} BODY\nBODY: /{fenced_body(self.code_chars)}/\n"
        return AnswerFormat(f"{self.name}:{'cot' if cot else 'plain'}", grammar)

    def summarise(
        self,
        items: dict[str, dict],
        rows: list[dict],
        mode: EvalMode,
        ks=None,
        unrunnable_ids=(),
        runnable_only: bool = False,
    ) -> dict:
        ks = tuple(mode.pass_at_k if ks is None else ks)
        by_item: dict[str, list[dict]] = {}
        for row in rows:
            by_item.setdefault(row["id"], []).append(row)
        groups = sorted({items[i].get("group") for i in by_item if items[i].get("group") is not None})
        missing = sorted(set(unrunnable_ids) - set(by_item))

        def passk(counts: list[tuple[int, int]]) -> dict:
            values = pass_at_ks(counts, [k for k in ks if k <= mode.samples]) if counts else {}
            return {f"pass@{k}": v for k, v in values.items()}

        def scores(ids: list[str], failed: list[str]) -> dict:
            counts = [(len(by_item[i]), sum(bool(r["passed"]) for r in by_item[i])) for i in ids]
            errors = sum(bool(r.get("compile_error")) for i in ids for r in by_item[i])
            out = {
                "n": len(ids) + len(failed),
                **passk(counts + [(mode.samples, 0)] * len(failed)),
                "compile_errors": errors / mode.samples if ids else None,
                "unparsed": sum(
                    r.get("reason", "") is not None and str(r.get("reason", "")).startswith("parse")
                    for i in ids
                    for r in by_item[i]
                ),
            }
            if failed:
                out["unrunnable"] = len(failed)
            return out

        ids = sorted(by_item)
        out = {
            "metric": "pass@k",
            "mode": mode.name,
            "denominator": "official",
            **scores(ids, missing),
            "groups": {g: scores([i for i in ids if items[i].get("group") == g], []) for g in groups},
        }
        if runnable_only:
            out["runnable_only"] = {
                "n": len(ids),
                **passk([(len(by_item[i]), sum(bool(r["passed"]) for r in by_item[i])) for i in ids]),
            }
        return out
