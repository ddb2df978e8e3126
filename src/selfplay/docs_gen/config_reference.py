"""docs/config-reference.md: every key of the config schema, generated from the schemas.

The schema is the whole one the config check validates against (:func:`selfplay.config.schema`:
``config/schema.json`` plus each registered track's ``tracks/<name>/schema.json``). Every key
gets its type, default, description and the paper sections its description cites. Keys are
walked through ``$ref``, the alternatives of ``anyOf``/``oneOf``, the entries of lists of
mappings (``key[]``) and the values of mappings with free names (``key.<name>``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..config.defaults import NO_DEFAULT, resolve

PAGE = "docs/config-reference.md"

# "paper 001 Sec. 3.1", "paper 000's Table 4", "Paper 000 App. F", "paper 004, App. D": the
# number and, where the description gives one, the part of the paper right after it.
_PAPER_REF = re.compile(
    r"\b[Pp]aper (\d{3})(?:'s)?,?"
    r"(?: ((?:Sec\.|Section|§|App\.|Appendix|Tables?|Figures?|Eq\.|Algorithm)"
    r" ?[A-Z]?\d*(?:[.\-]\d+)*(?: and \d+)?))?"
)


@dataclass(frozen=True)
class Key:
    path: str  # dotted; "[]" marks a list entry, "<name>" a freely named mapping entry
    type: str
    default: object  # NO_DEFAULT where the schema gives none
    description: str
    paper: str  # the paper sections the description cites, e.g. "001 Sec. 3.1"


def paper_refs(description: str) -> str:
    """The paper references of a description, in order, without repeats ("000 App. F; 001")."""
    refs: list[str] = []
    for number, part in _PAPER_REF.findall(description):
        ref = f"{number} {part.rstrip('.')}" if part else number
        if ref not in refs and not (not part and any(r.startswith(number + " ") for r in refs)):
            refs.append(ref)
    # a bare number is dropped when a later match gives a section of the same paper
    return "; ".join(r for r in refs if " " in r or not any(o.startswith(r + " ") for o in refs))


def _type_of(node: dict, root: dict) -> str:
    node = resolve(node, root)
    if "const" in node:
        return f"const {json.dumps(node['const'])}"
    for alt_key in ("anyOf", "oneOf"):
        if alt_key in node:
            parts = []
            for alt in node[alt_key]:
                t = _type_of(alt, root)
                if t not in parts:
                    parts.append(t)
            return " or ".join(parts)
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    words = []
    for k in kinds:
        if k == "array" and isinstance(node.get("items"), dict):
            words.append(f"list of {_type_of(node['items'], root)}")
        elif (
            k == "object"
            and isinstance(node.get("additionalProperties"), dict)
            and not node.get("properties")
        ):
            words.append(f"mapping of {_type_of(node['additionalProperties'], root)}")
        else:
            words.append(str(k))
    text = " or ".join(words)
    if "enum" in node:
        choices = "one of " + ", ".join(json.dumps(v) for v in node["enum"])
        text = f"{text}, {choices}" if text else choices
    return text or "any"


def _alternatives(node: dict, root: dict) -> list[dict]:
    """``node`` and the alternatives of its anyOf/oneOf, each resolved."""
    node = resolve(node, root)
    out = [node]
    for alt_key in ("anyOf", "oneOf"):
        for alt in node.get(alt_key, []):
            out.extend(_alternatives(alt, root))
    return out


def config_keys(root: dict) -> list[Key]:
    """Every key of the schema ``root``, in schema order, parents before their children."""
    keys: list[Key] = []
    listed: set[str] = set()

    def add(path: str, sub: dict) -> None:
        prop = resolve(sub, root)
        if path in listed:
            return
        listed.add(path)
        description = str(prop.get("description", ""))
        keys.append(
            Key(
                path,
                _type_of(prop, root),
                prop.get("default", NO_DEFAULT),
                description,
                paper_refs(description),
            )
        )

    def walk(node: dict, prefix: str, depth: int) -> None:
        if depth > 12:  # a schema that refers to itself: stop rather than loop
            return
        for alt in _alternatives(node, root):
            for key, sub in (alt.get("properties") or {}).items():
                add(f"{prefix}{key}", sub)
                walk(sub, f"{prefix}{key}.", depth + 1)
            items = alt.get("items")
            if isinstance(items, dict) and any(a.get("properties") for a in _alternatives(items, root)):
                walk(items, f"{prefix[:-1]}[].", depth + 1)
            extra = alt.get("additionalProperties")
            if isinstance(extra, dict) and any(a.get("properties") for a in _alternatives(extra, root)):
                add(f"{prefix}<name>", extra)
                walk(extra, f"{prefix}<name>.", depth + 1)

    walk(root, "", 0)
    return keys


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default_cell(value: object) -> str:
    if value is NO_DEFAULT:
        return "—"
    return "`" + json.dumps(value, ensure_ascii=False).replace("|", "\\|") + "`"


def render(root: dict | None = None) -> str:
    """The page's Markdown: one table per top-level key (the track sections among them)."""
    from ..config import schema
    from ..tracks.registry import TRACKS

    root = schema() if root is None else root
    keys = config_keys(root)
    top = list((root.get("properties") or {}).keys())
    lines = [
        "# Config reference",
        "",
        "<!-- Generated by `selfplay docs` (src/selfplay/docs_gen/config_reference.py) from the",
        "     schemas; tests/test_docs_reference.py fails when this page is not current. -->",
        "",
        "Every key the config check knows, from `src/selfplay/config/schema.json` and each",
        "track's `src/selfplay/tracks/<track>/schema.json`. A key a config leaves out takes its",
        "default (— : no default; the key is required, or the code computes its value from other",
        "keys). `key[]` is an entry of a list of mappings, `key.<name>` an entry of a mapping whose",
        "names you choose. *Paper* gives the papers (by number, see `config/papers/`) and the",
        "sections that the description cites. To change a key's text, edit its `description` in",
        "the schema and run `selfplay docs` (or `python -m selfplay docs`).",
        "",
        f"{len(keys)} keys.",
        "",
    ]
    heads = {re.split(r"[.\[]", k.path, maxsplit=1)[0] for k in keys if re.search(r"[.\[]", k.path)}
    sections: dict[str, list[Key]] = {}
    for key in keys:  # a top-level key with keys below it has a section; the rest share one
        head = re.split(r"[.\[]", key.path, maxsplit=1)[0]
        sections.setdefault(head if head in heads else "", []).append(key)
    order = [""] + [t for t in top if t in sections]
    lines.append(
        "Sections: " + ", ".join(f"[`{t}`](#{t})" if t else "[top level](#top-level)" for t in order)
    )
    lines.append("")
    for head in order:
        if head in TRACKS:
            paper = TRACKS[head].paper
            title = f"{head}: {TRACKS[head].title}, paper {paper.number} ({paper.title})"
        else:
            title = head or "top level"
        lines += [f'<a id="{head or "top-level"}"></a>', "", f"## {title}", ""]
        lines += ["| Key | Type | Default | Description | Paper |", "| --- | --- | --- | --- | --- |"]
        for key in sections[head]:
            lines.append(
                f"| `{key.path}` | {_cell(key.type)} | {_default_cell(key.default)} "
                f"| {_cell(key.description)} | {_cell(key.paper)} |"
            )
        lines.append("")
    return "\n".join(lines)
