"""Reasons to refuse a spec or a solution, and the records that carry them.

Both screens record findings the same way: a code, a human detail and the line it was
found on, each code once per line, reported ordered by line. Each back-end names its
own codes (a subclass of :class:`Problems` with its ``reasons``) and words its own
:class:`SpecError` (``language``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from ..errors import UserError


@dataclass(frozen=True)
class Problem:
    """One reason to refuse: ``code`` (a key of the back-end's reasons), a human
    ``detail`` and the 1-based ``line`` it was found on (None when it concerns the
    whole text)."""

    code: str
    detail: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Problems:
    """Problems in the order found; the same code on the same line is kept once.

    A back-end subclasses it and sets ``reasons`` (code -> meaning): adding a code
    that is not there is a programming error."""

    reasons: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._seen: set[tuple[str, int | None]] = set()

    def add(self, code: str, detail: str, line: int | None = None) -> None:
        assert code in self.reasons, code
        if (code, line) not in self._seen:
            self._seen.add((code, line))
            self.items.append(Problem(code, detail, line))

    def drop(self, code: str, lines: set[int | None]) -> None:
        """Forget the problems with this code on these lines."""
        self.items = [p for p in self.items if not (p.code == code and p.line in lines)]
        self._seen = {(p.code, p.line) for p in self.items}

    def sorted(self) -> list[Problem]:
        """By line (whole-text problems first), in the order found within a line."""
        return sorted(self.items, key=lambda p: p.line or 0)

    def codes(self) -> list[str]:
        """The distinct codes, in the order of :meth:`sorted`."""
        return list(dict.fromkeys(p.code for p in self.sorted()))

    def result(self) -> ScreenResult:
        """The screen's verdict on what was found."""
        return ScreenResult(not self.items, self.codes(), self.sorted())


@dataclass(frozen=True)
class ScreenResult:
    """The screen's verdict: ``ok`` when nothing was found; ``reasons`` the distinct
    codes; ``problems`` every finding, ordered by line (whole-text ones first)."""

    ok: bool
    reasons: list[str]
    problems: list[Problem] = field(default_factory=list)

    def summary(self) -> str:
        """One line: ``accepted`` or ``refused: code (line N: detail); ...``."""
        if self.ok:
            return "accepted"
        parts = [
            f"{p.code} ({'line ' + str(p.line) + ': ' if p.line else ''}{p.detail})" for p in self.problems
        ]
        return "refused: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reasons": list(self.reasons),
            "problems": [p.to_dict() for p in self.problems],
        }


class SpecError(UserError):
    """A text that is not a usable spec; ``reasons`` holds the codes, ``problems`` the
    details. A back-end's subclass sets ``language`` (``"Verus "``: "not a valid Verus
    spec"; empty: "not a valid spec")."""

    language: ClassVar[str] = ""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        self.reasons = list(dict.fromkeys(p.code for p in problems))
        first = problems[0]
        where = f"line {first.line}: " if first.line else ""
        more = f" (and {len(problems) - 1} more: {', '.join(self.reasons[1:])})" if len(problems) > 1 else ""
        super().__init__(f"not a valid {self.language}spec: {first.code}: {where}{first.detail}{more}")
