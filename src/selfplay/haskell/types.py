"""Haskell types: a small AST, a parser for type expressions, rendering, instantiation.

The AST covers what the data pipeline can build literals for, plus enough of the rest
of Haskell's type language to parse real signatures and say clearly why a type is not
supported:

* :class:`Prim` - ``Int``, ``Integer``, ``Bool``, ``Char``, ``String``, ``Double``,
  ``Float`` and the unit type ``()``.
* :class:`ListType` ``[t]``, :class:`TupleType` ``(a, b, ...)`` (arity >= 2),
  :class:`MaybeType` ``Maybe t``, :class:`EitherType` ``Either a b``.
* :class:`FunctionType` ``a -> b`` (arrows associate to the right).
* :class:`TypeVar` ``a``, :class:`TypeApp` (a type variable applied to arguments,
  ``t a``), and :class:`OtherType` (any other constructor, e.g. ``Map.Map k v``,
  ``IO ()``, a user data type). These parse fine but are not "supported" for literals.

``String`` and ``[Char]`` are the same type in Haskell; the AST keeps the spelling that
was written (``Prim("String")`` vs ``ListType(Prim("Char"))``) so rendering round-trips;
:func:`is_string_type` treats both alike.

Signatures may carry a context (``(Ord a, Num a) => a -> a -> a``) and an explicit
``forall a b.``; :func:`parse_qualified_type` returns a :class:`QualifiedType`.
:func:`instantiate` replaces every type variable by a concrete type (see
:data:`INSTANTIATION_RULE`).

Errors: :class:`UnsupportedType` (a type this module cannot handle, with a one-line
``reason``) and its subclass :class:`TypeParseError` (text that is not a type
expression this parser understands). Both are :class:`selfplay.errors.UserError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from selfplay.errors import UserError

# --------------------------------------------------------------------------- errors


class UnsupportedType(UserError):
    """A Haskell type this module cannot handle; ``reason`` is a one-line explanation."""

    def __init__(self, reason: str, type_text: str | None = None) -> None:
        self.reason = reason
        self.type_text = type_text
        message = reason if not type_text else f"{reason} (in type '{type_text}')"
        super().__init__(message)


class TypeParseError(UnsupportedType):
    """The text is not a Haskell type expression that this parser understands."""


# --------------------------------------------------------------------------- AST

PRIMITIVE_NAMES: tuple[str, ...] = ("Int", "Integer", "Bool", "Char", "String", "Double", "Float", "()")
"""Names of the primitive (nullary) types that have literals."""

NUMERIC_NAMES: frozenset[str] = frozenset({"Int", "Integer", "Double", "Float"})
INTEGRAL_NAMES: frozenset[str] = frozenset({"Int", "Integer"})
FRACTIONAL_NAMES: frozenset[str] = frozenset({"Double", "Float"})


@dataclass(frozen=True)
class HsType:
    """Base class of all Haskell type nodes; ``str(t)`` renders Haskell source."""

    def render(self) -> str:
        """Haskell source text of this type (minimal parentheses)."""
        return render_type(self)

    def __str__(self) -> str:
        return render_type(self)


@dataclass(frozen=True)
class Prim(HsType):
    """A primitive type; ``name`` is one of :data:`PRIMITIVE_NAMES`."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in PRIMITIVE_NAMES:
            raise ValueError(f"not a primitive type name: {self.name!r}")


@dataclass(frozen=True)
class ListType(HsType):
    """``[elem]``."""

    elem: HsType


@dataclass(frozen=True)
class TupleType(HsType):
    """``(items[0], items[1], ...)`` with at least two items."""

    items: tuple[HsType, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        if len(self.items) < 2:
            raise ValueError("a tuple type needs at least two components")


@dataclass(frozen=True)
class MaybeType(HsType):
    """``Maybe inner``."""

    inner: HsType


@dataclass(frozen=True)
class EitherType(HsType):
    """``Either left right``."""

    left: HsType
    right: HsType


@dataclass(frozen=True)
class FunctionType(HsType):
    """``arg -> result``."""

    arg: HsType
    result: HsType


@dataclass(frozen=True)
class TypeVar(HsType):
    """A type variable such as ``a``."""

    name: str


@dataclass(frozen=True)
class TypeApp(HsType):
    """A type variable applied to type arguments, e.g. ``t a`` or ``m (Maybe b)``."""

    head: TypeVar
    args: tuple[HsType, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))


@dataclass(frozen=True)
class OtherType(HsType):
    """Any other type constructor ``name`` (possibly qualified) applied to ``args``.

    Examples: ``Map.Map String Int``, ``IO ()``, ``Tree a``, and known constructors that
    are not fully applied (``Maybe`` alone, ``[]`` alone).
    """

    name: str
    args: tuple[HsType, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))


INT = Prim("Int")
INTEGER = Prim("Integer")
BOOL = Prim("Bool")
CHAR = Prim("Char")
STRING = Prim("String")
DOUBLE = Prim("Double")
FLOAT = Prim("Float")
UNIT = Prim("()")


@dataclass(frozen=True)
class Constraint:
    """A class constraint ``class_name args...`` from a signature's context, e.g. ``Ord a``."""

    class_name: str
    args: tuple[HsType, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))

    def render(self) -> str:
        """Haskell source text, e.g. ``Ord a`` or ``Show (t a)``."""
        return " ".join([self.class_name] + [render_type(a, _PREC_ATOM) for a in self.args])

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class QualifiedType:
    """A type with its context: ``constraints => body`` (``constraints`` may be empty)."""

    constraints: tuple[Constraint, ...]
    body: HsType

    def __post_init__(self) -> None:
        object.__setattr__(self, "constraints", tuple(self.constraints))

    def render(self) -> str:
        """Haskell source text, e.g. ``(Ord a, Num a) => a -> a -> a``."""
        return render_qualified_type(self)

    def __str__(self) -> str:
        return self.render()


def is_string_type(t: HsType) -> bool:
    """True for ``String`` and ``[Char]``."""
    return t == STRING or (isinstance(t, ListType) and t.elem == CHAR)


# --------------------------------------------------------------------------- rendering

_PREC_TOP = 0  # anything goes: function types unparenthesised
_PREC_FUN_ARG = 1  # left of an arrow: function types need parentheses
_PREC_ATOM = 2  # argument of a type application: applications need parentheses too


def render_type(t: HsType, prec: int = _PREC_TOP) -> str:
    """Haskell source text of ``t`` with the fewest parentheses that keep its meaning."""
    if isinstance(t, Prim):
        return t.name
    if isinstance(t, TypeVar):
        return t.name
    if isinstance(t, ListType):
        return f"[{render_type(t.elem)}]"
    if isinstance(t, TupleType):
        return "(" + ", ".join(render_type(i) for i in t.items) + ")"
    if isinstance(t, FunctionType):
        text = f"{render_type(t.arg, _PREC_FUN_ARG)} -> {render_type(t.result, _PREC_TOP)}"
        return f"({text})" if prec >= _PREC_FUN_ARG else text
    if isinstance(t, MaybeType):
        head, args = "Maybe", (t.inner,)
    elif isinstance(t, EitherType):
        head, args = "Either", (t.left, t.right)
    elif isinstance(t, TypeApp):
        head, args = t.head.name, t.args
    elif isinstance(t, OtherType):
        head, args = t.name, t.args
    else:  # pragma: no cover - every node class is handled above
        raise TypeError(f"not a Haskell type node: {t!r}")
    if not args:
        return head
    text = " ".join([head] + [render_type(a, _PREC_ATOM) for a in args])
    return f"({text})" if prec >= _PREC_ATOM else text


def render_qualified_type(qt: QualifiedType) -> str:
    """Haskell source text of a type with its context."""
    body = render_type(qt.body)
    if not qt.constraints:
        return body
    if len(qt.constraints) == 1:
        context = qt.constraints[0].render()
    else:
        context = "(" + ", ".join(c.render() for c in qt.constraints) + ")"
    return f"{context} => {body}"


# --------------------------------------------------------------------------- parsing

_TOKEN_RE = re.compile(
    r"""
     (?P<ws>\s+)
    |(?P<arrow>->|\u2192)
    |(?P<darrow>=>|\u21d2)
    |(?P<con>(?:[A-Z][\w']*\.)*[A-Z][\w']*)
    |(?P<var>[a-z_][\w']*)
    |(?P<punct>[()\[\],.])
    |(?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_OTHER_CHAR_REASONS = {
    "{": "braces (records or Liquid Haskell refinements) are not part of a Haskell type",
    "~": "type equality constraints or laziness annotations (~) are not supported",
    "!": "strictness annotations (!) are not supported in types",
    "'": "promoted constructors (DataKinds) are not supported",
    "#": "unboxed or magic-hash types (#) are not supported",
    "@": "type applications (@) are not allowed in a type",
    "*": "kinds (*) are not supported in types",
    ":": "kind signatures or type operators (:) are not supported",
    '"': "type-level strings are not supported",
}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "ws":
            continue
        tokens.append(_Tok(kind, m.group(), m.start()))
    return tokens


def _normalise_con(name: str) -> str:
    """Strip a ``Prelude.`` qualifier, which names the same type."""
    return name[len("Prelude.") :] if name.startswith("Prelude.") else name


def _make_con(name: str, args: tuple[HsType, ...], source: str) -> HsType:
    """Build the node for constructor ``name`` applied to ``args`` (known names get their node)."""
    if name in PRIMITIVE_NAMES:
        if args:
            raise TypeParseError(f"'{name}' takes no type arguments, got {len(args)}", source)
        return Prim(name)
    if name == "Maybe" and len(args) > 1:
        raise TypeParseError(f"'Maybe' takes 1 type argument, got {len(args)}", source)
    if name == "Either" and len(args) > 2:
        raise TypeParseError(f"'Either' takes 2 type arguments, got {len(args)}", source)
    if name == "[]" and len(args) > 1:
        raise TypeParseError(f"the list type '[]' takes 1 type argument, got {len(args)}", source)
    if name == "Maybe" and len(args) == 1:
        return MaybeType(args[0])
    if name == "Either" and len(args) == 2:
        return EitherType(args[0], args[1])
    if name == "[]" and len(args) == 1:
        return ListType(args[0])
    return OtherType(name, args)


def apply_type(head: HsType, args: tuple[HsType, ...], source: str = "") -> HsType:
    """``head`` applied to further type ``args`` (``source`` is the type text for error messages)."""
    if isinstance(head, OtherType):
        return _make_con(head.name, head.args + args, source)
    if isinstance(head, Prim):
        return _make_con(head.name, args, source)
    if isinstance(head, TypeVar):
        return TypeApp(head, args)
    if isinstance(head, TypeApp):
        return TypeApp(head.head, head.args + args)
    raise TypeParseError(f"'{render_type(head)}' cannot be applied to type arguments", source)


class _TypeParser:
    """Recursive-descent parser over the tokens of one type expression."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    # -- helpers
    def peek(self) -> _Tok | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected end of type")
        self.i += 1
        return tok

    def error(self, reason: str) -> TypeParseError:
        return TypeParseError(reason, self.text.strip())

    def expect(self, text: str) -> None:
        tok = self.peek()
        if tok is None:
            raise self.error(f"expected '{text}' but the type ended")
        if tok.text != text:
            raise self.unexpected(tok, f"expected '{text}'")
        self.i += 1

    def unexpected(self, tok: _Tok, what: str = "") -> TypeParseError:
        if tok.kind == "other" and tok.text in _OTHER_CHAR_REASONS:
            return self.error(_OTHER_CHAR_REASONS[tok.text])
        prefix = f"{what}, found" if what else "unexpected"
        return self.error(f"{prefix} '{tok.text}' at column {tok.pos + 1}")

    # -- grammar
    def parse_qualified(self) -> QualifiedType:
        self.skip_forall()
        constraints: list[Constraint] = []
        while self.context_ahead():
            context = self.parse_type()
            self.expect("=>")
            constraints.extend(self.to_constraints(context))
            self.skip_forall()
        body = self.parse_type()
        self.expect_end()
        return QualifiedType(tuple(constraints), body)

    def parse_plain(self) -> HsType:
        if self.context_ahead():
            raise self.error("a class context ('=>') is not allowed here; use parse_qualified_type")
        t = self.parse_type()
        self.expect_end()
        return t

    def expect_end(self) -> None:
        tok = self.peek()
        if tok is not None:
            raise self.unexpected(tok)

    def skip_forall(self) -> None:
        tok = self.peek()
        if tok is None or tok.text != "forall":
            return
        self.i += 1
        while (tok := self.peek()) is not None and tok.kind == "var":
            self.i += 1
        self.expect(".")

    def context_ahead(self) -> bool:
        """Is there a ``=>`` at bracket depth 0 before the end of the tokens?"""
        depth = 0
        for tok in self.tokens[self.i :]:
            if tok.text in "([":
                depth += 1
            elif tok.text in ")]":
                depth -= 1
            elif tok.kind == "darrow" and depth == 0:
                return True
        return False

    def to_constraints(self, t: HsType) -> list[Constraint]:
        parts = list(t.items) if isinstance(t, TupleType) else [t]
        out: list[Constraint] = []
        for part in parts:
            if part == UNIT:
                continue
            if isinstance(part, OtherType) and part.args:
                out.append(Constraint(part.name, part.args))
            else:
                raise self.error(f"'{render_type(part)}' is not a class constraint")
        return out

    def parse_type(self) -> HsType:
        left = self.parse_btype()
        tok = self.peek()
        if tok is not None and tok.kind == "arrow":
            self.i += 1
            return FunctionType(left, self.parse_type())
        return left

    def starts_atom(self, tok: _Tok | None) -> bool:
        return tok is not None and (tok.kind in ("con", "var") or tok.text in ("(", "["))

    def parse_btype(self) -> HsType:
        tok = self.peek()
        if not self.starts_atom(tok):
            if tok is None:
                raise self.error("expected a type but the text ended")
            raise self.unexpected(tok, "expected a type")
        head = self.parse_atype()
        args: list[HsType] = []
        while self.starts_atom(self.peek()):
            args.append(self.parse_atype())
        if not args:
            return head
        return apply_type(head, tuple(args), self.text.strip())

    def parse_atype(self) -> HsType:
        tok = self.take()
        if tok.kind == "con":
            return _make_con(_normalise_con(tok.text), (), self.text.strip())
        if tok.kind == "var":
            if tok.text == "forall":
                raise self.error("a nested 'forall' (rank-N type) is not supported")
            if tok.text == "_":
                raise self.error("a wildcard '_' in a type is not supported")
            return TypeVar(tok.text)
        if tok.text == "[":
            if (nxt := self.peek()) is not None and nxt.text == "]":
                self.i += 1
                return OtherType("[]")
            elem = self.parse_type()
            self.expect("]")
            return ListType(elem)
        if tok.text == "(":
            nxt = self.peek()
            if nxt is not None and nxt.text == ")":
                self.i += 1
                return UNIT
            if nxt is not None and nxt.text in (",", "->"):
                raise self.error(
                    f"the prefix constructor '({nxt.text})' is not supported; write the type out"
                )
            first = self.parse_type()
            items = [first]
            while (nxt := self.peek()) is not None and nxt.text == ",":
                self.i += 1
                items.append(self.parse_type())
            self.expect(")")
            return TupleType(tuple(items)) if len(items) > 1 else first
        raise self.unexpected(tok, "expected a type")


def parse_type(text: str) -> HsType:
    """Parse a Haskell type expression without a context, e.g. ``[(Int, Maybe Bool)] -> Int``.

    Raises :class:`TypeParseError` (with a reason) for text it cannot parse.
    """
    if not text or not text.strip():
        raise TypeParseError("empty type")
    return _TypeParser(text).parse_plain()


def parse_qualified_type(text: str) -> QualifiedType:
    """Parse a type that may have ``forall`` and a context, e.g. ``(Ord a, Num a) => a -> a``."""
    if not text or not text.strip():
        raise TypeParseError("empty type")
    return _TypeParser(text).parse_qualified()


# --------------------------------------------------------------------------- traversal


def children(t: HsType) -> tuple[HsType, ...]:
    """The direct sub-types of ``t`` (for a TypeApp: its head variable, then its arguments)."""
    if isinstance(t, ListType):
        return (t.elem,)
    if isinstance(t, TupleType):
        return t.items
    if isinstance(t, MaybeType):
        return (t.inner,)
    if isinstance(t, EitherType):
        return (t.left, t.right)
    if isinstance(t, FunctionType):
        return (t.arg, t.result)
    if isinstance(t, TypeApp):
        return (t.head,) + t.args
    if isinstance(t, OtherType):
        return t.args
    return ()


def walk(t: HsType) -> Iterator[HsType]:
    """Every node of ``t``, pre-order (the node itself first)."""
    yield t
    for child in children(t):
        yield from walk(child)


def type_variables(t: HsType) -> list[str]:
    """Names of the type variables in ``t``, in order of first appearance."""
    seen: dict[str, None] = {}
    for node in walk(t):
        if isinstance(node, TypeVar):
            seen.setdefault(node.name, None)
    return list(seen)


def split_function_type(t: HsType) -> tuple[list[HsType], HsType]:
    """``a -> b -> c`` -> ``([a, b], c)``; a non-function type gives ``([], t)``."""
    args: list[HsType] = []
    while isinstance(t, FunctionType):
        args.append(t.arg)
        t = t.result
    return args, t


def function_type(args: Iterable[HsType], result: HsType) -> HsType:
    """The curried function type ``args[0] -> ... -> result`` (``result`` when there are no args)."""
    out = result
    for arg in reversed(list(args)):
        out = FunctionType(arg, out)
    return out


# --------------------------------------------------------------------------- support check

_KNOWN_ARITY = {"Maybe": 1, "Either": 2, "[]": 1}

_UNSUPPORTED_HINTS = {
    "IO": "IO actions have no literal values",
    "Map": "Data.Map values have no literal syntax",
    "Set": "Data.Set values have no literal syntax",
    "IntMap": "Data.IntMap values have no literal syntax",
    "Text": "Data.Text values need OverloadedStrings or pack",
    "Array": "arrays have no literal syntax",
    "Vector": "vectors have no literal syntax",
}


def unsupported_reason(t: HsType, user_types: Iterable[str] = ()) -> str | None:
    """Why ``t`` has no literal this package can generate, or None when it is supported.

    Supported: the primitives, lists, tuples, ``Maybe`` and ``Either`` of supported types.
    ``user_types`` names data/newtype declarations of the program (for a clearer reason).
    """
    user = set(user_types)
    for node in walk(t):
        if isinstance(node, FunctionType):
            return f"function type '{render_type(node)}' has no literal values"
        if isinstance(node, TypeVar):
            return f"type variable '{node.name}' is not instantiated to a concrete type"
        if isinstance(node, TypeApp):
            return f"type '{render_type(node)}' applies a type variable"
        if isinstance(node, OtherType):
            base = node.name.rsplit(".", 1)[-1]
            if node.name in _KNOWN_ARITY:
                return f"'{node.name}' needs {_KNOWN_ARITY[node.name]} type argument(s), got {len(node.args)}"
            if node.name in user or base in user:
                return f"'{node.name}' is a user-defined data type; only {_supported_list()} are supported"
            if base in _UNSUPPORTED_HINTS:
                return f"type '{render_type(node)}' is not supported: {_UNSUPPORTED_HINTS[base]}"
            return f"type constructor '{node.name}' is not supported; only {_supported_list()} are supported"
    return None


def _supported_list() -> str:
    return ", ".join(PRIMITIVE_NAMES) + ", lists, tuples, Maybe and Either"


def check_supported(t: HsType, what: str = "type", user_types: Iterable[str] = ()) -> None:
    """Raise :class:`UnsupportedType` when ``t`` has no generatable literals; ``what`` names it."""
    reason = unsupported_reason(t, user_types)
    if reason is not None:
        raise UnsupportedType(f"{what}: {reason}", render_type(t))


def is_supported(t: HsType) -> bool:
    """True when literals of ``t`` can be generated (see :func:`unsupported_reason`)."""
    return unsupported_reason(t) is None


# --------------------------------------------------------------------------- instantiation

INSTANTIATION_RULE = """\
Each type variable of a signature is replaced by one concrete type, the same everywhere:
* A variable of kind * (used bare, e.g. `a`) gets the first of Int, Double, String whose
  instances cover all the classes the context puts on it (Eq, Ord, Show, Read, Enum,
  Num, Real, Integral, Bounded, Ix, Bits ... -> Int; Fractional, Floating, RealFrac,
  RealFloat -> Double; Semigroup, Monoid, IsString -> String). An unconstrained
  variable becomes Int.
* A variable applied to one argument (`t a`, `f Int`) becomes the list constructor when
  its classes are among Functor, Foldable, Traversable, Applicative, Monad, Alternative,
  MonadPlus, MonadFail (`Foldable t => t a -> Int` becomes `[Int] -> Int`).
* A constraint on a compound type (`Show (t a)`, `Eq [a]`) passes its class to the
  variables inside it when the class is one that lists, tuples, Maybe and Either inherit
  from their elements (Eq, Ord, Show, Read, NFData, Hashable); constraints on concrete
  types are left to GHC.
* Anything else raises UnsupportedType with the reason: an unknown class, classes that
  no candidate satisfies (e.g. Integral and Fractional), a multi-parameter class, a
  variable used at two kinds, or one applied to two or more arguments.
"""

_INT_CLASSES = frozenset(
    "Eq Ord Show Read Enum Bounded Num Real Integral Ix Bits FiniteBits NFData Hashable "
    "PrintfArg Random Storable Typeable Data".split()
)
_DOUBLE_CLASSES = frozenset(
    "Eq Ord Show Read Enum Num Real Fractional Floating RealFrac RealFloat NFData Hashable "
    "PrintfArg Random Storable Typeable Data".split()
)
_STRING_CLASSES = frozenset(
    "Eq Ord Show Read Semigroup Monoid IsString NFData Hashable PrintfArg Typeable Data".split()
)
_CANDIDATES: tuple[tuple[HsType, frozenset[str]], ...] = (
    (INT, _INT_CLASSES),
    (DOUBLE, _DOUBLE_CLASSES),
    (STRING, _STRING_CLASSES),
)
_LIST_CONSTRUCTOR_CLASSES = frozenset(
    "Functor Foldable Traversable Applicative Monad Alternative MonadPlus MonadFail".split()
)
_STRUCTURAL_CLASSES = frozenset("Eq Ord Show Read NFData Hashable".split())

_LIST_CONSTRUCTOR = "[]"  # marker in a substitution: the variable becomes the list type constructor


@dataclass
class _VarUse:
    bare: bool = False
    arities: set[int] = field(default_factory=set)
    classes: list[str] = field(default_factory=list)


def choose_instance(var: str, classes: Iterable[str]) -> HsType:
    """The concrete kind-* type for variable ``var`` under ``classes`` (see :data:`INSTANTIATION_RULE`)."""
    wanted = list(dict.fromkeys(c.rsplit(".", 1)[-1] for c in classes))
    for candidate, known in _CANDIDATES:
        if set(wanted) <= known:
            return candidate
    all_known = _INT_CLASSES | _DOUBLE_CLASSES | _STRING_CLASSES
    unknown = [c for c in wanted if c not in all_known]
    if unknown:
        raise UnsupportedType(
            f"type variable '{var}' has constraint '{unknown[0]} {var}', a class the instantiation rule does not know"
        )
    context = ", ".join(f"{c} {var}" for c in wanted)
    raise UnsupportedType(
        f"no default type satisfies ({context}) for type variable '{var}'; tried Int, Double, String"
    )


def instantiate(t: QualifiedType | HsType) -> HsType:
    """Replace every type variable in ``t`` by a concrete type (one choice per variable).

    Returns the body with the context dropped. Raises :class:`UnsupportedType` with a
    reason when a variable cannot be instantiated sensibly (see :data:`INSTANTIATION_RULE`).
    """
    qt = t if isinstance(t, QualifiedType) else QualifiedType((), t)
    source = render_qualified_type(qt)
    uses: dict[str, _VarUse] = {}
    for name in type_variables(qt.body):
        arities = {len(n.args) for n in walk(qt.body) if isinstance(n, TypeApp) and n.head.name == name}
        uses[name] = _VarUse(bare=_appears_bare(qt.body, name), arities=arities)

    for c in qt.constraints:
        cls = c.class_name.rsplit(".", 1)[-1]
        if len(c.args) != 1:
            raise UnsupportedType(f"multi-parameter constraint '{c.render()}' cannot be instantiated", source)
        arg = c.args[0]
        if isinstance(arg, TypeVar):
            if arg.name in uses:  # a variable only in the context is ambiguous; GHC reports it
                uses[arg.name].classes.append(cls)
            continue
        inner_vars = type_variables(arg)
        if not inner_vars:
            continue  # a constraint on a concrete type: GHC checks it
        if cls not in _STRUCTURAL_CLASSES:
            raise UnsupportedType(
                f"constraint '{c.render()}' on a compound type cannot be instantiated", source
            )
        for name in inner_vars:
            if name in uses and not uses[name].arities:
                uses[name].classes.append(cls)

    mapping: dict[str, HsType | str] = {}
    for name, use in uses.items():
        if use.arities and use.bare:
            raise UnsupportedType(
                f"type variable '{name}' is used both applied and unapplied (kind clash)", source
            )
        if use.arities:
            if use.arities != {1}:
                raise UnsupportedType(
                    f"type variable '{name}' is applied to {max(use.arities)} arguments; only one-argument"
                    " container variables (like 't a') can be instantiated",
                    source,
                )
            bad = [c for c in use.classes if c not in _LIST_CONSTRUCTOR_CLASSES]
            if bad:
                raise UnsupportedType(
                    f"type variable '{name}' has constraint '{bad[0]} {name}',"
                    " which the list instantiation does not cover",
                    source,
                )
            mapping[name] = _LIST_CONSTRUCTOR
        else:
            try:
                mapping[name] = choose_instance(name, use.classes)
            except UnsupportedType as exc:
                raise UnsupportedType(exc.reason, source) from None
    return substitute(qt.body, mapping)


def _appears_bare(t: HsType, name: str) -> bool:
    """Does variable ``name`` occur somewhere other than as the head of a TypeApp?"""
    if isinstance(t, TypeVar):
        return t.name == name
    if isinstance(t, TypeApp):
        return any(_appears_bare(a, name) for a in t.args)
    return any(_appears_bare(c, name) for c in children(t))


def substitute(t: HsType, mapping: dict[str, HsType | str]) -> HsType:
    """Replace type variables by the types in ``mapping`` (``"[]"`` makes an applied variable a list)."""
    if isinstance(t, TypeVar):
        value = mapping.get(t.name, t)
        if isinstance(value, str):
            return OtherType("[]")
        return value
    if isinstance(t, TypeApp):
        args = tuple(substitute(a, mapping) for a in t.args)
        value = mapping.get(t.head.name)
        if value == _LIST_CONSTRUCTOR and len(args) == 1:
            return ListType(args[0])
        if isinstance(value, HsType):
            return apply_type(value, args, render_type(t))
        return TypeApp(t.head, args)
    if isinstance(t, ListType):
        return ListType(substitute(t.elem, mapping))
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute(i, mapping) for i in t.items))
    if isinstance(t, MaybeType):
        return MaybeType(substitute(t.inner, mapping))
    if isinstance(t, EitherType):
        return EitherType(substitute(t.left, mapping), substitute(t.right, mapping))
    if isinstance(t, FunctionType):
        return FunctionType(substitute(t.arg, mapping), substitute(t.result, mapping))
    if isinstance(t, OtherType):
        return OtherType(t.name, tuple(substitute(a, mapping) for a in t.args))
    return t


__all__ = [
    "BOOL",
    "CHAR",
    "DOUBLE",
    "FLOAT",
    "INSTANTIATION_RULE",
    "INT",
    "INTEGER",
    "PRIMITIVE_NAMES",
    "STRING",
    "UNIT",
    "Constraint",
    "EitherType",
    "FunctionType",
    "HsType",
    "ListType",
    "MaybeType",
    "OtherType",
    "Prim",
    "QualifiedType",
    "TupleType",
    "TypeApp",
    "TypeParseError",
    "TypeVar",
    "UnsupportedType",
    "apply_type",
    "check_supported",
    "children",
    "choose_instance",
    "function_type",
    "instantiate",
    "is_string_type",
    "is_supported",
    "parse_qualified_type",
    "parse_type",
    "render_qualified_type",
    "render_type",
    "split_function_type",
    "substitute",
    "type_variables",
    "unsupported_reason",
    "walk",
]
