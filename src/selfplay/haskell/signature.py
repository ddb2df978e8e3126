"""Top-level type signatures of a Haskell program, and renaming a top-level function.

The program is a module (``module M where ...``) or a bare list of top-level
definitions. The analysis is syntactic, in these steps:

1. The shared lexer (:mod:`selfplay.haskell.lexer`, default reading) splits the text
   into code, comments (``--`` line comments, nested ``{- -}`` blocks), ``{-# pragmas
   #-}``, ``{-@ Liquid Haskell annotations @-}``, string literals and character
   literals. Only code is looked at, so a signature inside a comment or an annotation
   does not count. ``-->`` and ``|--`` are operators, not comments, as in Haskell.
2. Top-level declarations are the lines that start at the layout column of the module
   (column 0 in practice: the column of the first token after ``module ... where``, or
   of the first token of a bare program); more deeply indented lines continue the
   declaration above them. ``where``/``let`` bindings and class or instance methods are
   therefore never top-level. A declaration may hold several ``;``-separated ones.
3. A declaration ``f, g, (<+>) :: type`` is a signature for each name listed.

The "main function" of a program is the first top-level signature naming an ordinary
(non-operator) function other than ``main``.

Top-level type synonyms (``type Point = (Int, Int)``, also with parameters) are
expanded in the signature found; ``data``/``newtype`` names are remembered so that an
argument of such a type gets a clear reason from :meth:`Signature.check_arguments_supported`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from selfplay.errors import UserError
from selfplay.haskell.lexer import (  # noqa: F401  (SYMBOL_CHARS: kept importable from here)
    RESERVED_WORDS,
    SYMBOL_CHARS,
    Segment,
    is_identifier,
    is_operator,
    lex,
)
from selfplay.haskell.types import (
    Constraint,
    EitherType,
    FunctionType,
    HsType,
    ListType,
    MaybeType,
    OtherType,
    QualifiedType,
    TupleType,
    TypeApp,
    TypeParseError,
    UnsupportedType,
    apply_type,
    check_supported,
    children,
    function_type,
    instantiate,
    parse_qualified_type,
    render_qualified_type,
    render_type,
    split_function_type,
    substitute,
)


class SignatureNotFound(UserError):
    """The program has no top-level type signature for the requested function."""


class RenameError(UserError):
    """A top-level function cannot be renamed as asked (bad name, missing function, clash)."""


HASKELL_KEYWORDS: frozenset[str] = RESERVED_WORDS
"""Reserved words that can never name a function."""

# --------------------------------------------------------------------------- lexer
# The lexer itself lives in selfplay.haskell.lexer (shared with the Liquid Haskell
# check); these two are the entry points callers of this module use.


def scan(text: str) -> list[Segment]:
    """Split ``text`` into consecutive segments covering it completely (kinds: code,
    comment, pragma, annotation, string, char)."""
    return list(lex(text).segments)


def mask(text: str, keep: tuple[str, ...] = ("code",)) -> str:
    """``text`` with every character outside segments of kind ``keep`` blanked (newlines kept).

    Offsets and columns are preserved, so positions in the result are positions in ``text``.
    """
    return lex(text).view(keep)


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Declaration:
    """One top-level declaration: ``text`` is the code with comments/strings blanked."""

    text: str
    line: int  # 1-based line of its first character
    offset: int  # offset of its first character in the program


def _indent(line: str) -> int:
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip())


def _layout_column(masked: str) -> int:
    """Column at which the top-level declarations of the program start."""
    m = re.search(r"[^\s\ufeff]", masked)
    if not m:
        return 0
    if re.match(r"module\b", masked[m.start() :]):
        where = re.compile(r"(?<![\w'])where(?![\w'])").search(masked, m.start())
        if where:
            nxt = re.compile(r"\S").search(masked, where.end())
            if nxt and nxt.group() != "{":
                line_start = masked.rfind("\n", 0, nxt.start()) + 1
                return len(masked[line_start : nxt.start()].expandtabs(8))
        return 0
    line_start = masked.rfind("\n", 0, m.start()) + 1
    return len(masked[line_start : m.start()].expandtabs(8))


def _split_semicolons(text: str) -> list[tuple[int, str]]:
    """Split at ``;`` outside brackets; returns (offset within text, piece)."""
    if ";" not in text:
        return [(0, text)]
    pieces: list[tuple[int, str]] = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c == ";" and depth == 0:
            pieces.append((start, text[start:i]))
            start = i + 1
    pieces.append((start, text[start:]))
    return pieces


def top_level_declarations(program: str) -> list[Declaration]:
    """The top-level declarations of ``program`` in order, comments and strings blanked."""
    masked = mask(program)
    column = _layout_column(masked)
    groups: list[tuple[int, int, list[str]]] = []  # (line index, offset, lines)
    offset = 0
    for index, line in enumerate(masked.split("\n")):
        if line.strip():
            if _indent(line) <= column or not groups:
                groups.append((index, offset, [line]))
            else:
                groups[-1][2].append(line)
        elif groups:
            groups[-1][2].append(line)
        offset += len(line) + 1
    declarations: list[Declaration] = []
    for index, start, lines in groups:
        text = "\n".join(lines).rstrip()
        for rel, piece in _split_semicolons(text):
            stripped = piece.strip()
            if not stripped:
                continue
            lead = rel + (len(piece) - len(piece.lstrip()))
            line = index + 1 + text.count("\n", 0, lead)
            declarations.append(Declaration(stripped, line, start + lead))
    return declarations


# --------------------------------------------------------------------------- signatures

_NAME_PATTERN = r"(?:[a-z_][\w']*|\(\s*[!#$%&*+./<=>?@\\^|~:-]+\s*\))"
_SIGNATURE_RE = re.compile(
    rf"({_NAME_PATTERN}(?:\s*,\s*{_NAME_PATTERN})*)\s*::(?![!#$%&*+./<=>?@\\^|~:-])(.*)\Z",
    re.DOTALL,
)
_SYNONYM_RE = re.compile(
    r"type\s+(?!family\b|instance\b|role\b)([A-Z][\w']*)((?:\s+[a-z_][\w']*)*)\s*=(.*)\Z", re.DOTALL
)
_DATA_RE = re.compile(r"(?:data|newtype)\s+(?!family\b|instance\b)(?:.*?=>\s*)?([A-Z][\w']*)", re.DOTALL)


@dataclass(frozen=True)
class SignatureText:
    """A top-level signature as written: one ``name`` and its ``type_text`` (whitespace collapsed)."""

    name: str  # an operator is given without parentheses, e.g. "<+>"
    type_text: str
    line: int

    @property
    def is_operator(self) -> bool:
        """True for an operator such as ``<+>``."""
        return not is_identifier(self.name)


def _clean_name(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith("("):
        return raw[1:-1].strip()
    return raw


def list_signatures(program: str) -> list[SignatureText]:
    """Every top-level type signature of ``program``, one entry per name, in source order."""
    out: list[SignatureText] = []
    for decl in top_level_declarations(program):
        m = _SIGNATURE_RE.match(decl.text)
        if not m:
            continue
        names = [_clean_name(n) for n in m.group(1).split(",")]
        if any(n in HASKELL_KEYWORDS for n in names):
            continue
        type_text = " ".join(m.group(2).split())
        out.extend(SignatureText(n, type_text, decl.line) for n in names)
    return out


@dataclass(frozen=True)
class TypeSynonym:
    """``type name params = body`` from the program."""

    name: str
    params: tuple[str, ...]
    body: HsType


def program_types(program: str) -> tuple[dict[str, TypeSynonym], frozenset[str]]:
    """Top-level type synonyms (those whose body parses) and data/newtype names of ``program``."""
    synonyms: dict[str, TypeSynonym] = {}
    data_names: set[str] = set()
    for decl in top_level_declarations(program):
        m = _SYNONYM_RE.match(decl.text)
        if m:
            try:
                body = parse_qualified_type(m.group(3))
            except UnsupportedType:
                continue
            if not body.constraints:
                synonyms[m.group(1)] = TypeSynonym(m.group(1), tuple(m.group(2).split()), body.body)
            continue
        m = _DATA_RE.match(decl.text)
        if m:
            data_names.add(m.group(1))
    return synonyms, frozenset(data_names)


_MAX_EXPANSIONS = 200


def expand_synonyms(t: HsType, synonyms: dict[str, TypeSynonym]) -> HsType:
    """``t`` with every fully applied type synonym from ``synonyms`` replaced by its body."""
    budget = [_MAX_EXPANSIONS]

    def go(node: HsType) -> HsType:
        if isinstance(node, OtherType):
            args = tuple(go(a) for a in node.args)
            syn = synonyms.get(node.name)
            if syn is not None and len(args) >= len(syn.params):
                budget[0] -= 1
                if budget[0] < 0:
                    raise UnsupportedType(f"type synonym '{syn.name}' expands without end (a cycle?)")
                k = len(syn.params)
                body = substitute(syn.body, dict(zip(syn.params, args[:k])))
                expanded = apply_type(body, args[k:], render_type(node)) if args[k:] else body
                return go(expanded)
            return OtherType(node.name, args)
        kids = children(node)
        if not kids:
            return node
        return _rebuild(node, tuple(go(c) for c in kids))

    return go(t)


def _rebuild(node: HsType, children: tuple[HsType, ...]) -> HsType:
    if isinstance(node, ListType):
        return ListType(children[0])
    if isinstance(node, TupleType):
        return TupleType(children)
    if isinstance(node, MaybeType):
        return MaybeType(children[0])
    if isinstance(node, EitherType):
        return EitherType(children[0], children[1])
    if isinstance(node, FunctionType):
        return FunctionType(children[0], children[1])
    if isinstance(node, TypeApp):
        return TypeApp(node.head, children[1:])
    return node  # pragma: no cover - leaves have no children


@dataclass(frozen=True)
class Signature:
    """A parsed top-level signature ``name :: constraints => arg_types[0] -> ... -> result_type``."""

    name: str  # operators without parentheses
    arg_types: tuple[HsType, ...]
    result_type: HsType
    constraints: tuple[Constraint, ...] = ()
    type_text: str = ""  # the type as written (whitespace collapsed, synonyms not expanded)
    line: int = 0  # 1-based line of the signature in the program
    user_types: frozenset[str] = field(
        default=frozenset(), compare=False
    )  # data/newtype names of the program

    @property
    def arity(self) -> int:
        """Number of arguments."""
        return len(self.arg_types)

    @property
    def is_operator(self) -> bool:
        """True when the function is an operator such as ``<+>``."""
        return not is_identifier(self.name)

    @property
    def function_type(self) -> HsType:
        """The whole type without the context."""
        return function_type(self.arg_types, self.result_type)

    @property
    def qualified_type(self) -> QualifiedType:
        """The whole type with its context."""
        return QualifiedType(self.constraints, self.function_type)

    def render(self) -> str:
        """Haskell source of the signature, e.g. ``f :: Int -> [Int] -> Bool``."""
        head = f"({self.name})" if self.is_operator else self.name
        return f"{head} :: {render_qualified_type(self.qualified_type)}"

    def instantiate(self) -> Signature:
        """The same signature with type variables replaced by concrete types and no context.

        Raises :class:`UnsupportedType` when a variable cannot be instantiated (see
        :data:`selfplay.haskell.types.INSTANTIATION_RULE`).
        """
        rest = instantiate(self.qualified_type)
        args: list[HsType] = []
        for _ in range(self.arity):
            assert isinstance(rest, FunctionType)
            args.append(rest.arg)
            rest = rest.result
        return replace(self, arg_types=tuple(args), result_type=rest, constraints=())

    def check_arguments_supported(self) -> None:
        """Raise :class:`UnsupportedType` naming the first argument that has no literals."""
        for index, t in enumerate(self.arg_types, start=1):
            check_supported(t, f"argument {index} of '{self.name}'", self.user_types)


def find_signature(
    program: str, name: str | None = None, *, expand: bool = True, require_arguments: bool = False
) -> Signature:
    """The parsed top-level signature of function ``name`` (default: the main function).

    ``name`` may be an operator, with or without parentheses. Type synonyms of the
    program are expanded unless ``expand`` is False. With ``require_arguments`` the main
    function is the first one (not ``main``, not an operator) taking at least one
    argument, so leading constants such as ``limit :: Int`` are passed over. Raises
    :class:`SignatureNotFound` when there is no such signature and
    :class:`TypeParseError` when its type cannot be parsed.
    """
    signatures = list_signatures(program)
    synonyms, data_names = program_types(program)
    if name is None:
        candidates = [s for s in signatures if not s.is_operator and s.name != "main"]
        if not candidates:
            raise SignatureNotFound("no top-level function with a type signature (other than main) was found")
        for candidate in candidates:
            parsed = _parse_signature(candidate, synonyms, data_names, expand)
            if parsed.arity > 0 or not require_arguments:
                return parsed
        raise SignatureNotFound("no top-level function with a type signature takes any arguments")
    wanted = _clean_name(name) if name.strip().startswith("(") else name.strip()
    chosen = next((s for s in signatures if s.name == wanted), None)
    if chosen is None:
        raise SignatureNotFound(_not_found_reason(program, wanted))
    return _parse_signature(chosen, synonyms, data_names, expand)


def _parse_signature(
    sig: SignatureText, synonyms: dict[str, TypeSynonym], data_names: frozenset[str], expand: bool
) -> Signature:
    try:
        qualified = parse_qualified_type(sig.type_text)
    except TypeParseError as exc:
        raise TypeParseError(
            f"signature of '{sig.name}' (line {sig.line}): {exc.reason}", sig.type_text
        ) from None
    body = expand_synonyms(qualified.body, synonyms) if expand else qualified.body
    args, result = split_function_type(body)
    return Signature(
        name=sig.name,
        arg_types=tuple(args),
        result_type=result,
        constraints=qualified.constraints,
        type_text=sig.type_text,
        line=sig.line,
        user_types=data_names,
    )


def main_function_name(program: str) -> str:
    """Name of the main function: the first top-level signature of a non-operator other than ``main``."""
    return find_signature(program).name


def _not_found_reason(program: str, name: str) -> str:
    local = re.compile(rf"^[ \t]+(?:\(\s*)?{re.escape(name)}(?:\s*\))?\s*(?:,[^\n]*)?::", re.MULTILINE)
    if local.search(mask(program)):
        return f"'{name}' has a type signature only inside a where/let/class block, not at the top level"
    return f"no top-level type signature for '{name}'"


# --------------------------------------------------------------------------- renaming


def _identifier_spans(masked: str, name: str) -> list[tuple[int, int]]:
    """Spans of ``name`` as a whole, unqualified identifier in already-masked text."""
    spans: list[tuple[int, int]] = []
    pattern = re.compile(rf"(?<![\w']){re.escape(name)}(?![\w'])")
    qualifier = re.compile(r"(?:^|[^\w'.])(?:[A-Z][\w']*\.)+\Z")
    for m in pattern.finditer(masked):
        start = m.start()
        if start > 0 and masked[start - 1] == "." and qualifier.search(masked[max(0, start - 200) : start]):
            continue  # M.name refers to another module's name
        spans.append((start, m.end()))
    return spans


def defines_top_level(program: str, name: str) -> bool:
    """Does ``program`` have a top-level signature or equation for function ``name``?"""
    if any(s.name == name for s in list_signatures(program)):
        return True
    start = re.compile(rf"(?:\(\s*)?{re.escape(name)}(?![\w'])")
    return any(start.match(d.text) for d in top_level_declarations(program))


def rename_function(program: str, old: str, new: str, *, include_annotations: bool = False) -> str:
    """Rename top-level function ``old`` to ``new`` everywhere in the code of ``program``.

    Only whole identifiers are renamed (``foo'`` and ``foobar`` stay when renaming
    ``foo``), never inside strings or comments, and not when qualified by a module
    (``M.foo``). With ``include_annotations`` the ``{-@ ... @-}`` Liquid Haskell
    annotations are renamed too. A local binding that shadows ``old`` is renamed as
    well (the analysis is not scope-aware). Raises :class:`RenameError` when a name is
    not an ordinary function name, ``old`` is not defined at top level, or ``new``
    already occurs in the program.
    """
    for label, value in (("old", old), ("new", new)):
        if not is_identifier(value):
            raise RenameError(f"{label} name '{value}' is not an ordinary Haskell function name")
    if old == new:
        return program
    if not defines_top_level(program, old):
        raise RenameError(f"no top-level function named '{old}' in the program")
    keep = ("code", "annotation") if include_annotations else ("code",)
    masked = mask(program, keep)
    if _identifier_spans(masked, new):
        raise RenameError(f"the new name '{new}' already occurs in the program")
    pieces: list[str] = []
    last = 0
    for start, end in _identifier_spans(masked, old):
        pieces.append(program[last:start])
        pieces.append(new)
        last = end
    pieces.append(program[last:])
    return "".join(pieces)


__all__ = [
    "HASKELL_KEYWORDS",
    "Declaration",
    "RenameError",
    "Segment",
    "Signature",
    "SignatureNotFound",
    "SignatureText",
    "TypeSynonym",
    "defines_top_level",
    "expand_synonyms",
    "find_signature",
    "is_identifier",
    "is_operator",
    "list_signatures",
    "main_function_name",
    "mask",
    "program_types",
    "rename_function",
    "scan",
    "top_level_declarations",
]
