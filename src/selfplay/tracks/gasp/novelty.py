"""GASP's novelty filter and buffer dissimilarity (paper 004, Sec. 3.3.1 and App. B).

Novelty. A valid lemma or lift candidate is rejected when it is too close to an item
already accepted: the paper embeds "the proposed question text and generated code",
takes cosines against "previously accepted items" and rejects "if the similarity exceeds
0.95 for any item in either buffer" (the global lemma and lift buffers). Settings
(``NoveltySettings``) for what the paper leaves open:

- ``threshold`` (0.95): reject above it, strictly (a cosine of exactly 0.95 passes).
- ``embed``: ``"question_and_code"`` (default) embeds the question and the code as two
  texts, each compared with the same kind of text of the buffer items (question with
  question, code with code); ``"joined"`` embeds them as one text (``joined_text``).
  Two texts is the closer reading of "embeddings of the proposed question text and
  generated code", and keeps a long code body from drowning a changed question.
- ``rule``: with two texts, ``"either"`` (default) rejects when either text's highest
  cosine exceeds the threshold, the paper's "for any item" read as any comparison;
  ``"both"`` rejects only when both do (a same-code, new-question candidate passes).
- ``within_batch`` (default False): only the global buffers count, as the paper says:
  "novelty with respect to the global buffer of previously accepted lemma/lift
  proposals", and Algorithm 1 adds a phase's local buffer to the global one "for future
  similarity checks" (lines 10 and 20), after the phase's update. True is a project
  extension: candidates judged earlier in the same call, and found novel, count against
  the later ones, and the caller adds the items its phase accepted in earlier rounds, so
  that two near-copies of one idea cannot both enter one update batch. An earlier
  candidate counts before its pass rate is known (novelty is judged first), so a
  near-copy of one that then falls outside the band is rejected too; ``eligible`` lets a
  caller that already knows which candidates cannot be accepted keep them from counting.

Similarities are cosines of unit rows (``selfplay.embeddings.normalise_rows``), computed
in float64 and rounded to float32 (the embeddings' precision) before they are compared
or reported, as EvolveCoder's de-duplication does, so a verdict does not depend on how
the rows were batched. ``novelty_verdicts`` reports, per candidate, the similarity its
rule compared with the threshold: with ``either`` the highest over both texts, with
``both`` the lower of the two texts' highest; ``None`` when there was nothing to compare
with (empty buffers, first candidate).

Buffer dissimilarity (Eq. 7): the mean over a batch of the mean over the earlier buffer
of 1 - cosine, i.e. 1 - the mean of all batch-by-buffer cosines (``buffer_dissimilarity``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .sections import from_section

EMBEDS = {"question_and_code": ("question", "code"), "joined": ("joined",)}
RULES = ("either", "both")
JOIN = "\n\n"


def joined_text(question: str, code: str) -> str:
    """The one text embedded with ``embed="joined"``."""
    return f"{question}{JOIN}{code}"


@dataclass(frozen=True)
class NoveltySettings:
    threshold: float = 0.95
    embed: str = "question_and_code"
    rule: str = "either"
    within_batch: bool = False

    def __post_init__(self):
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not -1.0 <= t <= 1.0:
            raise ValueError(f"threshold: must be a cosine in [-1, 1], not {t!r}")
        object.__setattr__(self, "threshold", float(t))
        if self.embed not in EMBEDS:
            raise ValueError(f"embed: must be one of {', '.join(EMBEDS)}, not {self.embed!r}")
        if self.rule not in RULES:
            raise ValueError(f"rule: must be one of {', '.join(RULES)}, not {self.rule!r}")
        if not isinstance(self.within_batch, bool):
            raise ValueError(f"within_batch: must be true or false, not {self.within_batch!r}")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The texts embedded per item: ``("question", "code")`` or ``("joined",)``."""
        return EMBEDS[self.embed]

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None, prefix: str) -> NoveltySettings:
        """Config ``section`` (keys under ``prefix``, e.g. ``gasp.novelty``) over the defaults."""
        return from_section(cls, section, prefix)


def _matrix(vecs: Any, what: str) -> np.ndarray:
    m = np.asarray(vecs, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"{what}: vectors must be a 2-d array (one row per text), not shape {m.shape}")
    if len(m) and not np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-3):
        raise ValueError(f"{what}: rows must have unit L2 norm (selfplay.embeddings.normalise_rows)")
    return m


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"vectors of dimension {a.shape[1]} cannot be compared with dimension {b.shape[1]}")
    return (a @ b.T).astype(np.float32)


def max_similarity(vecs: Any, buffer_vecs: Any) -> np.ndarray | None:
    """Per row of ``vecs``, its highest cosine with any row of ``buffer_vecs`` (float32);
    ``None`` when the buffer is empty (or ``None``)."""
    a = _matrix(vecs, "candidates")
    if buffer_vecs is None:
        return None
    b = _matrix(buffer_vecs, "buffer")
    if len(b) == 0:
        return None
    if len(a) == 0:
        return np.zeros(0, dtype=np.float32)
    return _cosines(a, b).max(axis=1)


def _by_kind(vecs: Any, kinds: tuple[str, ...], what: str) -> dict[str, np.ndarray] | None:
    """``vecs`` (one matrix, or a mapping kind -> matrix) as a mapping over ``kinds``."""
    if vecs is None:
        return None
    if isinstance(vecs, Mapping):
        if set(vecs) != set(kinds):
            raise ValueError(f"{what}: vectors for {sorted(vecs)}, but the settings embed {list(kinds)}")
        return {k: _matrix(vecs[k], f"{what} {k}") for k in kinds}
    if len(kinds) != 1:
        raise ValueError(f"{what}: one matrix given, but the settings embed {list(kinds)} as separate texts")
    return {kinds[0]: _matrix(vecs, what)}


def novelty_verdicts(
    candidate_vecs: Any,
    buffer_vecs: Any,
    settings: NoveltySettings = NoveltySettings(),
    eligible: Sequence[bool] | None = None,
) -> list[tuple[bool, float | None]]:
    """``(novel, similarity)`` per candidate, in order (module docstring).

    ``candidate_vecs`` and ``buffer_vecs``: per text kind of ``settings.kinds`` a matrix
    of unit rows (a mapping ``{"question": ..., "code": ...}``, or ``{"joined": ...}``;
    a bare matrix when there is one kind). The buffer holds every accepted item of both
    global buffers, stacked; ``None`` or zero rows is an empty buffer. ``eligible``: which
    candidates may count against later ones when ``settings.within_batch`` (all if None).
    """
    kinds = settings.kinds
    cand = _by_kind(candidate_vecs, kinds, "candidates")
    buf = _by_kind(buffer_vecs, kinds, "buffer")
    n = {len(m) for m in cand.values()}
    if len(n) != 1:
        raise ValueError(f"candidates: the text kinds have different row counts {sorted(n)}")
    n = n.pop()
    if eligible is not None and len(eligible) != n:
        raise ValueError(f"{len(eligible)} eligibility flags for {n} candidates")
    if buf is not None and len({len(m) for m in buf.values()}) != 1:
        raise ValueError("buffer: the text kinds have different row counts")
    base = {k: max_similarity(cand[k], buf[k] if buf is not None else None) for k in kinds}
    within = {k: _cosines(cand[k], cand[k]) for k in kinds} if settings.within_batch and n else None

    verdicts: list[tuple[bool, float | None]] = []
    counted: list[int] = []  # earlier candidates that count as accepted
    for i in range(n):
        best: dict[str, float] = {}
        for k in kinds:
            values = []
            if base[k] is not None:
                values.append(float(base[k][i]))
            if within is not None and counted:
                values.append(float(within[k][i, counted].max()))
            if values:
                best[k] = max(values)
        if not best:
            verdicts.append((True, None))
        else:
            sims = [best[k] for k in kinds]
            decisive = max(sims) if settings.rule == "either" else min(sims)
            novel = not decisive > settings.threshold
            verdicts.append((novel, decisive))
        if within is not None and verdicts[-1][0] and (eligible is None or eligible[i]):
            counted.append(i)
    return verdicts


def buffer_dissimilarity(batch_vecs: Any, earlier_vecs: Any) -> float | None:
    """Eq. 7: mean over the batch of (mean over the earlier buffer of 1 - cosine); ``None``
    when either is empty (or ``None``)."""
    if batch_vecs is None or earlier_vecs is None:
        return None
    a, b = _matrix(batch_vecs, "batch"), _matrix(earlier_vecs, "earlier buffer")
    if len(a) == 0 or len(b) == 0:
        return None
    return float((1.0 - _cosines(a, b).astype(np.float64)).mean(axis=1).mean())
