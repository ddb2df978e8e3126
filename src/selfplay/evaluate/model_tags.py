"""Model tags: the names the benchmark layer gives the models it evaluates. They appear
in the config (``<track>.benchmarks.models``), in file names
(``results/<track>/<experiment>/eval/<bench>/<tag>/<mode>.json``) and, as labels, in
the tables. This module is the one place that builds, parses, checks and labels them.

The kinds every track shares:

- ``base``: the untrained model;
- ``bob``: the trained Bob adapter;
- ``alice`` (config only): the final Alice, named ``alice_r<R>`` in files so that it
  is sampled once;
- ``alice_r<k>``: round k's Alice adapter (1 <= k <= R);
- ``grpo_r<k>``: the RL (GRPO) policy trained on round k's data (0 <= k <= R);
- ``alice_rounds`` / ``grpo_rounds`` (config only): every round's Alice / RL policy.

Besides these, a track's config may name models served elsewhere (``other_models``),
and a track may declare a tag kind of its own with :class:`TrackTagKind` (GASP's
checkpoints, ``ck_<method>_s<seed>_i<iteration>``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import UserError

BASE = "base"
BOB = "bob"
ALICE = "alice"
ALICE_ROUNDS = "alice_rounds"
GRPO_ROUNDS = "grpo_rounds"
# the tags a config may name that are not numbered
FIXED_TAGS = (BASE, BOB, ALICE, ALICE_ROUNDS, GRPO_ROUNDS)

# the numbered kinds (ModelTag.kind): round k's Alice, the RL policy of round k's data
ALICE_ROUND = "alice_round"
GRPO_ROUND = "grpo_round"
_ROUND_TAG = re.compile(r"(alice|grpo)_r(\d+)")
_ROUND_KINDS = {"alice": ALICE_ROUND, "grpo": GRPO_ROUND}

LABELS = {BASE: "Base", BOB: "Trained Bob", ALICE: "Trained Alice"}


class ModelTag(NamedTuple):
    """A parsed tag: ``kind`` is one of base, bob, alice, alice_rounds, grpo_rounds,
    alice_round, grpo_round; ``round`` is k for the numbered kinds, else None."""

    kind: str
    round: int | None = None


def alice_round(k: int) -> str:
    """The tag of round k's Alice."""
    return f"alice_r{int(k)}"


def grpo_round(k: int) -> str:
    """The tag of the RL policy trained on round k's data."""
    return f"grpo_r{int(k)}"


def parse(tag: str) -> ModelTag | None:
    """The shared kind a tag names, or None (a tag of other_models or of a track's own kind)."""
    if tag in FIXED_TAGS:
        return ModelTag(tag)
    m = _ROUND_TAG.fullmatch(tag)
    if m:
        return ModelTag(_ROUND_KINDS[m.group(1)], int(m.group(2)))
    return None


def is_shared(tag: str) -> bool:
    """Whether a tag is of a shared kind (numbered or not, whatever its round)."""
    return parse(tag) is not None


def rounds_of(tags, kind: str) -> dict[str, int]:
    """{tag: k} for the tags of a numbered kind (``alice_round`` or ``grpo_round``), in order."""
    return {t: p.round for t in tags if (p := parse(t)) is not None and p.kind == kind}


def expand(tags: list[str], rounds: int) -> list[str]:
    """Tags as files name them, in order and without repeats: ``alice_rounds`` written out
    as alice_r1..alice_r<R>, ``alice`` (the final Alice) as alice_r<R>, ``grpo_rounds``
    (one RL policy per round's data, rounds 0..R) as grpo_r0..grpo_r<R>."""
    out: list[str] = []
    for tag in tags:
        if tag == ALICE_ROUNDS:
            expanded = [alice_round(r) for r in range(1, rounds + 1)]
        elif tag == GRPO_ROUNDS:
            expanded = [grpo_round(r) for r in range(0, rounds + 1)]
        elif tag == ALICE:
            expanded = [alice_round(rounds)]
        else:
            expanded = [tag]
        for t in expanded:
            if t not in out:
                out.append(t)
    return out


def check(tag: str, rounds: int, others: tuple[str, ...] = ()) -> None:
    """Raise UserError unless ``tag`` names a model a track with ``rounds`` rounds has
    (``others``: the tags of its other_models)."""
    parsed = parse(tag)
    if tag in others or (
        parsed is not None
        and (
            parsed.round is None
            or (parsed.kind == ALICE_ROUND and 1 <= parsed.round <= rounds)
            or (parsed.kind == GRPO_ROUND and parsed.round <= rounds)
        )
    ):
        return
    raise UserError(
        f"unknown model {tag!r}: use base, bob, alice, alice_rounds, alice_r<k> with "
        f"1 <= k <= {rounds} (the track's rounds), grpo_rounds, grpo_r<k> with 0 <= k <= {rounds}, "
        "or a tag of other_models"
    )


def label(tag: str, names: dict[str, str] | None = None) -> str:
    """A tag as a table or figure names it: Base, Trained Bob, Trained Alice, Alice round k,
    GRPO on r<k>; any other tag as it is. ``names`` overrides the words for given tags (a
    paper's own wording, e.g. "Base model")."""
    if names and tag in names:
        return names[tag]
    parsed = parse(tag)
    if parsed is not None and parsed.kind == ALICE_ROUND:
        return f"Alice round {parsed.round}"
    if parsed is not None and parsed.kind == GRPO_ROUND:
        return f"GRPO on r{parsed.round}"
    return LABELS.get(tag, tag)


def wildcard_patterns(others: list[str], any_tag: str) -> dict[str, str]:
    """Wildcard patterns splitting a track's evaluated tags (``any_tag`` matches every tag):
    ``own`` for the models its jobs load, and, when it has ``other_models`` (their tags:
    ``others``), ``client`` for those served elsewhere, whose jobs are HTTP clients."""
    if not others:
        return {"own": any_tag}
    names = "|".join(re.escape(tag) for tag in others)
    # not one of those tags followed by anything but a tag character (the file name goes on)
    return {"own": f"(?!(?:{names})(?![A-Za-z0-9_])){any_tag}", "client": f"(?:{names})"}


class TrackTagKind:
    """A tag kind a track declares for models of its own, from a template whose fields
    are numbers or lower-case names, e.g. ``TrackTagKind("ck_{method}_s{seed}_i{iteration}",
    method=str, seed=int, iteration=int)``. A tag of a shared kind is never one of its tags."""

    _FIELD_PATTERNS = {int: r"\d+", str: r"[a-z_]+"}

    def __init__(self, template: str, **fields: type):
        self.template = template
        self.fields = fields
        names = re.findall(r"{(\w+)}", template)
        if sorted(names) != sorted(fields) or any(t not in self._FIELD_PATTERNS for t in fields.values()):
            raise ValueError(f"tag template {template!r}: fields {names} need a type each (int or str)")
        pattern = ""
        for literal, name in re.findall(r"([^{]*)(?:{(\w+)})?", template):
            pattern += re.escape(literal)
            if name:
                pattern += f"(?P<{name}>{self._FIELD_PATTERNS[fields[name]]})"
        self.pattern = re.compile(pattern)

    def build(self, **values) -> str:
        return self.template.format(**{k: self.fields[k](v) for k, v in values.items()})

    def parse(self, tag: str) -> dict | None:
        """The tag's fields, typed, or None when the tag is not of this kind."""
        m = self.pattern.fullmatch(tag)
        if not m or is_shared(tag):
            return None
        return {k: self.fields[k](v) for k, v in m.groupdict().items()}
