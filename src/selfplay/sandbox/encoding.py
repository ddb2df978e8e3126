"""Canonical, bounded encoding of a return value (runs inside the sandboxed child).

Every node becomes a two-element JSON list ``[tag, payload]`` so that values of
different Python types never collide: ``1``, ``1.0`` and ``True`` encode as
``["int", 1]``, ``["float", "1.0"]`` and ``["bool", true]``.  Unordered containers
(sets, frozensets, dict items) are sorted by the canonical text of their encoded
members, so the result does not depend on hash order or insertion order.

The walk is bounded in nodes, depth and output bytes and refuses cycles, so a
huge nested structure, a DAG that explodes when expanded (the shape of a pickle
bomb) or a self-referential list is reported instead of exhausting the child.
Only base-class methods of builtin types are used to read builtin values, so an
overridden ``__iter__`` or ``__str__`` on a subclass cannot lie to the encoder.
Objects of any other type are tagged with their type name and a bounded repr.
"""

from __future__ import annotations

import json
import re
import reprlib
import sys
from dataclasses import dataclass
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_SAFE_INT = 2**53


class EncodingLimitError(Exception):
    """The value cannot be encoded within the limits (size, depth, cycle, bad repr)."""


def _canon(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=True)


def _type_name(obj: Any) -> str:
    cls = type(obj)
    try:
        module = type.__getattribute__(cls, "__module__")
        name = type.__getattribute__(cls, "__qualname__")
    except Exception:
        return "?"
    if not isinstance(name, str):
        return "?"
    if module in ("builtins", None) or not isinstance(module, str):
        return name
    return f"{module}.{name}"


class Encoder:
    """One bounded walk over a value; create a fresh one per value."""

    def __init__(self, max_nodes: int, max_depth: int, max_bytes: int, max_repr: int):
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.max_bytes = max_bytes
        self.max_repr = max_repr
        self.nodes = 0
        self.size = 0
        self._open: set[int] = set()

    def _charge(self, nbytes: int) -> None:
        self.size += nbytes + 10
        if self.size > self.max_bytes:
            raise EncodingLimitError(f"encoded value exceeds {self.max_bytes // 1024} KiB")

    def encode(self, value: Any) -> Any:
        node = self._walk(value, 0)
        if len(_canon(node)) > self.max_bytes:
            raise EncodingLimitError(f"encoded value exceeds {self.max_bytes // 1024} KiB")
        return node

    def _walk(self, x: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise EncodingLimitError(f"value has more than {self.max_nodes} nodes")
        if depth > self.max_depth:
            raise EncodingLimitError(f"value is nested deeper than {self.max_depth} levels")
        cls = type(x)
        if x is None:
            self._charge(4)
            return ["None", None]
        if cls is bool:
            self._charge(5)
            return ["bool", x is True]
        if issubclass(cls, int):
            v = int.__index__(x)
            bits = v.bit_length()
            self._charge(bits // 3 + 2)
            if -_SAFE_INT < v < _SAFE_INT:
                return ["int", v]
            return ["int", str(v)]
        if issubclass(cls, float):
            text = float.__repr__(x)
            self._charge(len(text))
            return ["float", text]
        if issubclass(cls, complex):
            text = complex.__repr__(x)
            self._charge(len(text))
            return ["complex", text]
        if issubclass(cls, str):
            text = str.__str__(x)
            self._charge(len(text) * 2)
            return ["str", text]
        if issubclass(cls, bytes):
            self._charge(len(x) * 2)
            return ["bytes", bytes.hex(x)]
        if issubclass(cls, bytearray):
            self._charge(len(x) * 2)
            return ["bytearray", bytearray.hex(x)]
        if issubclass(cls, (list, tuple, set, frozenset, dict)):
            return self._container(x, cls, depth)
        return self._other(x)

    def _container(self, x: Any, cls: type, depth: int) -> Any:
        key = id(x)
        if key in self._open:
            raise EncodingLimitError("value is self-referential")
        self._open.add(key)
        try:
            self._charge(8)
            if issubclass(cls, list):
                return ["list", [self._walk(item, depth + 1) for item in list.__iter__(x)]]
            if issubclass(cls, tuple):
                return ["tuple", [self._walk(item, depth + 1) for item in tuple.__iter__(x)]]
            if issubclass(cls, dict):
                pairs = [[self._walk(k, depth + 1), self._walk(v, depth + 1)] for k, v in list(dict.items(x))]
                pairs.sort(key=lambda kv: _canon(kv[0]))
                return ["dict", pairs]
            tag = "frozenset" if issubclass(cls, frozenset) else "set"
            base = frozenset if tag == "frozenset" else set
            members = [self._walk(item, depth + 1) for item in list(base.__iter__(x))]
            members.sort(key=_canon)
            return [tag, members]
        finally:
            self._open.discard(key)

    def _other(self, x: Any) -> Any:
        try:
            text = repr(x)
        except Exception as exc:  # a hostile __repr__
            raise EncodingLimitError(
                f"repr() of a returned {_type_name(x)} object raised {_type_name(exc)}"
            ) from None
        if not isinstance(text, str):
            raise EncodingLimitError("repr() returned a non-string")
        text = _ADDRESS.sub(" at 0x?", str.__str__(text)[: self.max_repr])
        self._charge(len(text) * 2)
        return ["object", _type_name(x), text]


def encode_value(value: Any, max_nodes: int, max_depth: int, max_bytes: int, max_repr: int) -> Any:
    """Canonical encoding of ``value`` or EncodingLimitError."""
    old_limit = sys.getrecursionlimit()
    old_digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    try:
        sys.setrecursionlimit(max(old_limit, 3 * max_depth + 200))
        if old_digits is not None:
            sys.set_int_max_str_digits(0)
        return Encoder(max_nodes, max_depth, max_bytes, max_repr).encode(value)
    except RecursionError:
        raise EncodingLimitError(f"value is nested deeper than {max_depth} levels") from None
    finally:
        sys.setrecursionlimit(old_limit)
        if old_digits is not None:
            sys.set_int_max_str_digits(old_digits)


def bounded_repr(value: Any, max_chars: int) -> str:
    """A short repr for display; never raises and never walks more than a few levels."""
    shaper = reprlib.Repr()
    shaper.maxlevel = 5
    shaper.maxstring = min(max_chars, 300)
    shaper.maxlong = min(max_chars, 300)
    shaper.maxother = min(max_chars, 200)
    for attr in ("maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
        setattr(shaper, attr, 40)
    shaper.maxdict = 20
    try:
        text = shaper.repr(value)
    except Exception as exc:
        text = f"<unrepresentable {_type_name(value)}: {_type_name(exc)}>"
    if not isinstance(text, str):
        text = f"<unrepresentable {_type_name(value)}>"
    if len(text) > max_chars:
        text = text[: max_chars - 3] + "..."
    return text


def truncate(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


@dataclass(frozen=True)
class Opaque:
    """A decoded value of a type the encoding does not rebuild: its type name and repr."""

    type_name: str
    repr: str


class MalformedValue(ValueError):
    """An encoded value the encoder could not have written: a sandboxed program sent a
    well-framed but garbled or hostile reply. The only error ``decode_value`` raises."""


# The decoder's nesting bound: above ``SandboxLimits.max_value_depth`` (200) plus the few
# levels the call shims wrap around a value, and low enough that comparing or printing a
# decoded value stays far from Python's recursion limit.
MAX_DECODE_DEPTH = 256
_DECIMAL = re.compile(r"-?[0-9]+\Z")
_SCALARS = {"None": type(None), "bool": bool, "str": str}
_TEXT_TAGS = {"float": float, "complex": complex, "bytes": bytes.fromhex, "bytearray": bytearray.fromhex}
_SEQUENCES = {"list": list, "tuple": tuple}
_UNORDERED = {"set": set, "frozenset": frozenset}


def decode_value(node: Any) -> Any:
    """Rebuild a Python value from its canonical encoding (host side).

    Builtin types come back as themselves; any other object as an ``Opaque``. A node the
    encoder could not have written (unknown tag, wrong number of fields, a payload of the
    wrong type, an unhashable set member or dict key, text that is not a number where
    one is due, nesting deeper than ``MAX_DECODE_DEPTH``) raises ``MalformedValue``, and nothing
    else is raised, whatever ``node`` holds.
    """
    try:
        return _decode(node, MAX_DECODE_DEPTH)
    except RecursionError:
        raise MalformedValue("nested too deeply to decode") from None


def _decode(node: Any, depth: int) -> Any:
    if depth < 0:
        raise MalformedValue("nested too deeply to decode")
    if type(node) is not list or not node or type(node[0]) is not str:
        raise MalformedValue(f"not an encoded value: {bounded_repr(node, 80)}")
    tag = node[0]
    if tag == "object":
        if len(node) != 3 or type(node[1]) is not str or type(node[2]) is not str:
            raise MalformedValue("an object node needs a type name and a repr, both text")
        return Opaque(node[1], node[2])
    if len(node) != 2:
        raise MalformedValue(f"a node tagged {bounded_repr(tag, 40)} has {len(node)} fields instead of 2")
    body = node[1]
    if tag in _SCALARS:
        if type(body) is not _SCALARS[tag]:
            raise MalformedValue(f"a {tag} node holds a {type(body).__name__}")
        return body
    if tag == "int":
        return _decode_int(body)
    if tag in _TEXT_TAGS:
        if type(body) is not str:
            raise MalformedValue(f"a {tag} node holds a {type(body).__name__}, not text")
        try:
            return _TEXT_TAGS[tag](body)
        except ValueError:
            raise MalformedValue(f"a {tag} node holds {bounded_repr(body, 60)}") from None
    if type(body) is not list:
        if tag in _SEQUENCES or tag in _UNORDERED or tag == "dict":
            raise MalformedValue(f"a {tag} node holds a {type(body).__name__}, not a list")
        raise MalformedValue(f"unknown tag {bounded_repr(tag, 40)}")
    if tag in _SEQUENCES:
        items = []
        for item in body:
            items.append(_decode(item, depth - 1))
        return _SEQUENCES[tag](items)
    if tag in _UNORDERED:
        members = []
        for item in body:
            members.append(_hashable(_decode(item, depth - 1), f"a {tag} member"))
        return _UNORDERED[tag](members)
    if tag == "dict":
        pairs = []
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise MalformedValue("a dict item is not a [key, value] pair")
            key = _hashable(_decode(pair[0], depth - 1), "a dict key")
            pairs.append((key, _decode(pair[1], depth - 1)))
        return dict(pairs)
    raise MalformedValue(f"unknown tag {bounded_repr(tag, 40)}")


def _decode_int(body: Any) -> int:
    if type(body) is int:
        return body
    if type(body) is not str or not _DECIMAL.match(body):
        raise MalformedValue(f"an int node holds {bounded_repr(body, 60)}")
    try:
        return int(body)
    except ValueError:  # more digits than the interpreter converts by default
        pass
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return int(body)
    finally:
        sys.set_int_max_str_digits(old)


def _hashable(value: Any, role: str) -> Any:
    """``value`` when it can be a set member or dict key (as in the value that was encoded)."""
    try:
        hash(value)
    except TypeError:
        raise MalformedValue(f"{role} is an unhashable {type(value).__name__}") from None
    return value
