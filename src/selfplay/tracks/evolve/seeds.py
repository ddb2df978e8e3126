"""EvolveCoder's seed problems (paper 002, Sec. 2.1): the rows of five public datasets,
each turned into one record of the same shape, with a reason for every row left out.

A seed record::

    {"id", "source", "split", "question", "solutions": [Python 3 programs],
     "tests"?: {"format": "stdin" | "call", "inputs": [...], "outputs": [...], "fn_name"?},
     "starter_code"?, "entry"?}

``question`` is the problem statement (what de-duplication embeds), ``solutions`` the
source's reference programs that parse as Python 3 (duplicates removed, at most
``max_solutions`` when given), ``tests`` the source's own input/output pairs, raw
(stdin text for "stdin"; argument lists and return values, as the dataset writes them,
for "call"), ``entry`` the function a call-style test calls, ``starter_code`` the
source's function header when it has one. A row is left out, with its reason in the
skipped list (``{"source", "split", "row", "id", "reason"}``), when a field the record
needs is missing or empty, when a JSON text field does not parse, when the row is not
a Python task, or when none of its solutions is a Python 3 program that parses.

Where each record field comes from, per source (``FIELDS``; the loaders read exactly
these names):

* taco (BAAI/TACO): id = split and row position (TACO has no id column); question =
  ``question``; solutions = ``solutions`` (JSON text, a list); tests =
  ``input_output`` (JSON text).
* apps (codeparrot/apps): id = ``problem_id``; the rest as TACO.
* primeintellect (PrimeIntellect/verifiable-coding-problems, SYNTHETIC-1's coding
  tasks): id = ``problem_id``; question = ``prompt`` with its task wrapper removed;
  solutions = ``gold_standard_solution`` (a fenced block); tests =
  ``verification_info`` (JSON text, ``{"language", "test_cases": [{"type", "input",
  "output", "fn_name"}]}``); rows whose ``task_type`` is not "verifiable_code" go.
* code_contests (deepmind/code_contests): id = ``name``; question = ``description``;
  solutions = ``solutions`` ``{language: [...], solution: [...]}``, language 3
  (PYTHON3) only; tests = ``public_tests`` then ``private_tests`` (``{input: [...],
  output: [...]}``).
* codeforces (open-r1/codeforces-cots, config solutions_py, optionally joined with
  open-r1/codeforces by id): id = ``id``; question = ``title``, ``description``,
  ``input_format``, ``output_format`` and ``note``; solutions = the last ```python
  block of each ``generation`` (several rows may answer one problem); tests = the
  ``official_tests`` of open-r1/codeforces when joined, else ``examples``.

TACO and APPS also give ``starter_code`` and, for call-style problems, ``fn_name``
inside ``input_output``; TACO rows have no id column, so a record's id is its split and
position. Codeforces problems with an ``interaction_format`` (interactive problems)
are left out: they cannot be checked by comparing outputs. CodeContests'
``generated_tests`` are not used (machine-made inputs with a solution's outputs).

Facts not confirmed against the data itself (the loaders make the named choice and
say so in a skipped row's reason when it turns out wrong):

* PrimeIntellect: which release the paper took (its 16,252 problems may be the
  "primeintellect" split of agentica-org/DeepCoder-Preview-Dataset, built from the same
  tasks in another row format, rather than verifiable-coding-problems itself); that ``verification_info`` and
  ``metadata`` are JSON text (dicts are accepted too); the exact wording of the task
  wrapper around the statement in ``prompt`` (a leading "Solve the following coding
  problem using the programming language python:" and a trailing "... Now solve the
  problem and return the code."; removed only when it matches).
* Codeforces: that the solutions_py config of open-r1/codeforces-cots has the same
  problem columns as its checker_interactor config (``id``, ``title``, ``description``,
  ``input_format``, ``output_format``, ``note``, ``examples``, ``interaction_format``,
  ``generation``), and that open-r1/codeforces names its full tests ``official_tests``
  (a list of ``{input, output}``).
* Table 1's "before" counts match the raw row counts for CodeContests (13,328 + 117 +
  165 = 13,610) and nearly for TACO (26,443 rows, 26,433 in the table); whether the
  paper dropped rows without a Python solution before counting is not stated.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from ...errors import UserError

SOURCES = ("taco", "apps", "primeintellect", "code_contests", "codeforces")
# How tables name each source (the paper's Table 1 writes "Contests" for CodeContests).
LABELS = {
    "taco": "TACO",
    "apps": "APPS",
    "primeintellect": "PrimeIntellect",
    "code_contests": "CodeContests",
    "codeforces": "Codeforces",
}

# Per source: record field -> the dataset's column(s) it is read from.
FIELDS: dict[str, dict[str, str]] = {
    "taco": {
        "id": "(split and row position)",
        "question": "question",
        "solutions": "solutions",
        "tests": "input_output",
        "starter_code": "starter_code",
    },
    "apps": {
        "id": "problem_id",
        "question": "question",
        "solutions": "solutions",
        "tests": "input_output",
        "starter_code": "starter_code",
    },
    "primeintellect": {
        "id": "problem_id",
        "question": "prompt",
        "solutions": "gold_standard_solution",
        "tests": "verification_info",
        "task_type": "task_type",
    },
    "code_contests": {
        "id": "name",
        "question": "description",
        "solutions": "solutions",
        "tests": "public_tests,private_tests",
    },
    "codeforces": {
        "id": "id",
        "question": "title,description,input_format,output_format,note",
        "solutions": "generation",
        "tests": "official_tests|examples",
        "interactive": "interaction_format",
    },
}
# The (source, record field) mappings above that are not confirmed (module docstring).
UNCONFIRMED = {
    ("primeintellect", "question"),
    ("primeintellect", "tests"),
    ("codeforces", "question"),
    ("codeforces", "solutions"),
    ("codeforces", "tests"),
    ("codeforces", "interactive"),
}

# The columns each loader reads (read_rows can restrict a parquet file to them).
COLUMNS: dict[str, tuple[str, ...]] = {
    "taco": ("question", "solutions", "input_output", "starter_code"),
    "apps": ("problem_id", "question", "solutions", "input_output", "starter_code"),
    "primeintellect": ("problem_id", "task_type", "prompt", "gold_standard_solution", "verification_info"),
    "code_contests": ("name", "description", "solutions", "public_tests", "private_tests"),
    "codeforces": (
        "id",
        "title",
        "description",
        "input_format",
        "output_format",
        "note",
        "examples",
        "interaction_format",
        "generation",
    ),
}
CODE_CONTESTS_PYTHON3 = 3  # CodeContests' language enum: 1 is Python 2, 3 is Python 3

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "data" / "evolve_seeds"


class Skip(Exception):
    """A row that cannot become a seed record; the message is the recorded reason."""


# --- reading files ------------------------------------------------------------------


def read_rows(path: str | Path, columns: Iterable[str] | None = None) -> Iterator[dict]:
    """The rows of one dataset file: JSON lines (.jsonl), a JSON list (.json), Parquet, or
    an Arrow file as ``datasets`` writes it (.arrow). ``columns`` restricts a Parquet or
    Arrow file to those columns (the ones present)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise UserError(f"{path}:{number}: not a JSON line: {exc}") from exc
        return
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise UserError(f"{path}: expected a JSON list of rows")
        yield from data
        return
    if suffix in (".parquet", ".arrow"):
        yield from _read_table(path, columns)
        return
    raise UserError(f"{path}: unknown dataset file type {suffix!r} (jsonl, json, parquet or arrow)")


def _read_table(path: Path, columns: Iterable[str] | None) -> Iterator[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = list(columns) if columns is not None else None
    if path.suffix.lower() == ".parquet":
        handle = pq.ParquetFile(path)
        names = [c for c in wanted if c in handle.schema_arrow.names] if wanted else None
        for batch in handle.iter_batches(batch_size=256, columns=names):
            yield from batch.to_pylist()
        return
    with pa.memory_map(str(path)) as source:
        try:
            reader = pa.ipc.open_stream(source)
        except pa.ArrowInvalid:
            reader = pa.ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            batches = iter(reader)
        for batch in batches:
            if wanted:
                batch = batch.select([c for c in wanted if c in batch.schema.names])
            yield from batch.to_pylist()


# --- small helpers ------------------------------------------------------------------


def _text(row: Mapping, name: str) -> str:
    value = row.get(name)
    if value is None:
        raise Skip(f"missing field {name}")
    if not isinstance(value, str):
        raise Skip(f"field {name} is not text")
    if not value.strip():
        raise Skip(f"empty field {name}")
    return value


def _json_field(row: Mapping, name: str, allow_empty: bool = False):
    """A field that holds JSON as text (a dict or list already decoded is taken as is)."""
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if allow_empty:
            return None
        raise Skip(f"missing field {name}")
    if not isinstance(value, str):
        return value
    try:
        return _loads_long_ints(value)
    except (json.JSONDecodeError, RecursionError, ValueError):
        raise Skip(f"unparsable JSON in field {name}") from None


def _loads_long_ints(text: str):
    """``json.loads`` that also reads integers longer than Python's default 4300-digit
    limit for converting text to int (APPS tests hold some)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.loads(text)
    finally:
        sys.set_int_max_str_digits(limit)


def parses_as_python3(code: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(code)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
    return True


def python_solutions(candidates: Iterable, max_solutions: int | None = None) -> list[str]:
    """The candidates that are non-empty text parsing as Python 3, without repeats, in
    order, at most ``max_solutions``; raises Skip when none is left."""
    given, out = 0, []
    for code in candidates:
        if not isinstance(code, str) or not code.strip():
            continue
        given += 1
        code = code.replace("\r\n", "\n")
        if code in out or not parses_as_python3(code):
            continue
        out.append(code)
        if max_solutions is not None and len(out) >= max_solutions:
            break
    if not out:
        raise Skip("no Python solution" if given == 0 else "no solution parses as Python 3")
    return out


_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def fenced_python(text: str | None, whole_if_unfenced: bool = True) -> str | None:
    """The last ```python block of ``text``; text without any fence is returned whole
    when ``whole_if_unfenced`` (a bare program), else None; None too when there is a
    fence but no closed block."""
    if not isinstance(text, str) or not text.strip():
        return None
    blocks = _FENCE.findall(text)
    if blocks:
        return blocks[-1]
    return text if whole_if_unfenced and "```" not in text else None


def _io_tests(spec, where: str) -> tuple[dict | None, str | None]:
    """TACO/APPS ``input_output``: {"inputs", "outputs", "fn_name"?} -> (tests, entry)."""
    if spec is None:
        return None, None
    if not isinstance(spec, dict):
        raise Skip(f"{where} is not a JSON object")
    inputs, outputs = spec.get("inputs"), spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise Skip(f"{where} has no matching inputs and outputs lists")
    if not inputs:
        return None, None
    entry = spec.get("fn_name") or None
    tests = {"format": "call" if entry else "stdin", "inputs": inputs, "outputs": outputs}
    if entry:
        tests["fn_name"] = entry
    return tests, entry


def _record(
    source: str,
    split: str,
    native,
    question: str,
    solutions: list[str],
    tests: dict | None = None,
    starter: str | None = None,
    entry: str | None = None,
) -> dict:
    rec = {
        "id": f"{source}/{native}"
        if source in ("primeintellect", "codeforces")
        else f"{source}/{split}/{native}",
        "source": source,
        "split": split,
        "question": question.strip(),
        "solutions": solutions,
    }
    if tests:
        rec["tests"] = tests
    if starter and starter.strip():
        rec["starter_code"] = starter
    if entry:
        rec["entry"] = entry
    return rec


# --- one normaliser per source ------------------------------------------------------


def _taco_or_apps(source: str, row: Mapping, index: int, split: str, max_solutions: int | None) -> dict:
    native = index if source == "taco" else row.get("problem_id")
    if native is None:
        raise Skip("missing field problem_id")
    question = _text(row, "question")
    listed = _json_field(row, "solutions", allow_empty=True)
    if listed is None:
        raise Skip("no Python solution")
    if not isinstance(listed, list):
        raise Skip("field solutions is not a JSON list")
    solutions = python_solutions(listed, max_solutions)
    tests, entry = _io_tests(_json_field(row, "input_output", allow_empty=True), "input_output")
    starter = row.get("starter_code") if isinstance(row.get("starter_code"), str) else None
    return _record(source, split, native, question, solutions, tests, starter, entry)


_PI_HEAD = re.compile(
    r"\A\s*Solve the following coding problem using the programming language [\w+#]+\s*:\s*"
)
_PI_TAIL = re.compile(r"\s*(?:The input will be [^\n]*\s*)?Now solve the problem and return the code\.?\s*\Z")


def primeintellect_statement(prompt: str) -> str:
    """The problem statement inside a verifiable-coding-problems ``prompt`` (the task
    wrapper removed where it is the one described in the module docstring)."""
    return _PI_TAIL.sub("", _PI_HEAD.sub("", prompt, count=1), count=1).strip()


def _primeintellect(row: Mapping, index: int, split: str, max_solutions: int | None) -> dict:
    native = row.get("problem_id")
    if native is None or not str(native).strip():
        raise Skip("missing field problem_id")
    task = row.get("task_type")
    if task is not None and task != "verifiable_code":
        raise Skip(f"not a coding task (task_type {task})")
    info = _json_field(row, "verification_info")
    if not isinstance(info, dict):
        raise Skip("verification_info is not a JSON object")
    language = str(info.get("language") or "python").lower()
    if language not in ("python", "python3"):
        raise Skip(f"not a Python task (language {language})")
    question = primeintellect_statement(_text(row, "prompt"))
    if not question:
        raise Skip("empty problem statement")
    code = fenced_python(row.get("gold_standard_solution"))
    solutions = python_solutions([code] if code is not None else [], max_solutions)
    cases = info.get("test_cases") or []
    if not isinstance(cases, list) or not all(
        isinstance(c, dict) and "input" in c and "output" in c for c in cases
    ):
        raise Skip("verification_info test_cases are not a list of {input, output}")
    tests, entry = None, None
    if cases:
        kinds = {c.get("type", "stdin_stdout") for c in cases}
        if len(kinds) > 1:
            raise Skip(f"verification_info mixes test types {sorted(kinds)}")
        if kinds == {"function_call"}:
            entry = cases[0].get("fn_name") or None
            if not entry:
                raise Skip("function_call tests without fn_name")
            tests = {"format": "call", "fn_name": entry}
        else:
            tests = {"format": "stdin"}
        tests["inputs"] = [c["input"] for c in cases]
        tests["outputs"] = [c["output"] for c in cases]
    return _record("primeintellect", split, native, question, solutions, tests, None, entry)


def _pairs(struct, name: str) -> tuple[list, list]:
    if struct is None:
        return [], []
    if not isinstance(struct, Mapping):
        raise Skip(f"field {name} is not an {{input, output}} struct")
    inputs, outputs = list(struct.get("input") or []), list(struct.get("output") or [])
    if len(inputs) != len(outputs):
        raise Skip(f"field {name} has {len(inputs)} inputs but {len(outputs)} outputs")
    return inputs, outputs


def _code_contests(row: Mapping, index: int, split: str, max_solutions: int | None) -> dict:
    native = _text(row, "name")
    question = _text(row, "description")
    sols = row.get("solutions")
    if not isinstance(sols, Mapping):
        raise Skip("missing field solutions")
    languages, programs = list(sols.get("language") or []), list(sols.get("solution") or [])
    if len(languages) != len(programs):
        raise Skip("solutions.language and solutions.solution differ in length")
    py3 = [p for lang, p in zip(languages, programs) if lang == CODE_CONTESTS_PYTHON3]
    solutions = python_solutions(py3, max_solutions)
    inputs, outputs = [], []
    for name in ("public_tests", "private_tests"):
        i, o = _pairs(row.get(name), name)
        inputs += i
        outputs += o
    tests = {"format": "stdin", "inputs": inputs, "outputs": outputs} if inputs else None
    return _record("code_contests", split, native, question, solutions, tests)


def codeforces_statement(row: Mapping) -> str:
    """Title, statement, input and output sections and the note, as one text."""
    parts = [_text(row, "description")]
    title = row.get("title")
    if isinstance(title, str) and title.strip():
        parts.insert(0, title.strip())
    for heading, name in (("Input", "input_format"), ("Output", "output_format"), ("Note", "note")):
        value = row.get(name)
        if isinstance(value, str) and value.strip():
            parts.append(f"{heading}\n{value.strip()}")
    return "\n\n".join(p.strip() for p in parts)


def _codeforces_tests(row: Mapping, problem: Mapping | None) -> dict | None:
    cases = None
    if problem is not None and problem.get("official_tests"):
        cases = problem["official_tests"]
    elif row.get("examples"):
        cases = row["examples"]
    if not cases:
        return None
    if not isinstance(cases, list) or not all(
        isinstance(c, Mapping) and "input" in c and "output" in c for c in cases
    ):
        raise Skip("tests are not a list of {input, output}")
    return {"format": "stdin", "inputs": [c["input"] for c in cases], "outputs": [c["output"] for c in cases]}


def _codeforces(
    rows: Iterable[Mapping], split: str, max_solutions: int | None, problems: Mapping[str, Mapping] | None
) -> tuple[list[dict], list[dict]]:
    """Generations grouped by problem id (several rows may answer one problem)."""
    grouped: dict[str, list[tuple[int, Mapping]]] = {}
    skipped = []
    for index, row in enumerate(rows):
        pid = row.get("id")
        if not isinstance(pid, str) or not pid.strip():
            skipped.append(_skipped("codeforces", split, index, None, "missing field id"))
            continue
        grouped.setdefault(pid, []).append((index, row))
    records = []
    for pid, members in grouped.items():
        index, first = members[0]
        try:
            if isinstance(first.get("interaction_format"), str) and first["interaction_format"].strip():
                raise Skip("interactive problem")
            question = codeforces_statement(first)
            # a generation is prose around the program: only a fenced block counts
            programs = [fenced_python(r.get("generation"), whole_if_unfenced=False) for _, r in members]
            solutions = python_solutions(programs, max_solutions)
            tests = _codeforces_tests(first, (problems or {}).get(pid))
            records.append(_record("codeforces", split, pid, question, solutions, tests))
        except Skip as why:
            skipped.append(_skipped("codeforces", split, index, pid, str(why)))
    for pid in problems or {}:
        if pid not in grouped:
            skipped.append(_skipped("codeforces", split, None, pid, "no Python solution"))
    return records, skipped


def _skipped(source: str, split: str, index: int | None, native, reason: str) -> dict:
    return {
        "source": source,
        "split": split,
        "row": index,
        "id": None if native is None else str(native),
        "reason": reason,
    }


_PER_ROW = {
    "taco": lambda r, i, s, m: _taco_or_apps("taco", r, i, s, m),
    "apps": lambda r, i, s, m: _taco_or_apps("apps", r, i, s, m),
    "primeintellect": _primeintellect,
    "code_contests": _code_contests,
}
_NATIVE = {"taco": None, "apps": "problem_id", "primeintellect": "problem_id", "code_contests": "name"}


def normalise(
    source: str,
    rows: Iterable[Mapping],
    split: str = "train",
    max_solutions: int | None = None,
    problems: Mapping[str, Mapping] | None = None,
) -> tuple[list[dict], list[dict]]:
    """(records, skipped) from one source's rows of one split. ``problems`` (Codeforces
    only): open-r1/codeforces rows by id, whose ``official_tests`` replace the examples;
    a problem there without any usable solution is listed as skipped. A record whose id
    was already made from an earlier row is skipped as a duplicate id."""
    if source not in SOURCES:
        raise UserError(f"unknown seed source {source!r}; one of {', '.join(SOURCES)}")
    if max_solutions is not None and max_solutions < 1:
        raise UserError(f"max_solutions must be at least 1, not {max_solutions}")
    if source == "codeforces":
        return _codeforces(rows, split, max_solutions, problems)
    records, skipped, seen = [], [], set()
    for index, row in enumerate(rows):
        native_key = _NATIVE[source]
        native = index if native_key is None else row.get(native_key) if isinstance(row, Mapping) else None
        try:
            if not isinstance(row, Mapping):
                raise Skip("row is not an object")
            rec = _PER_ROW[source](row, index, split, max_solutions)
            if rec["id"] in seen:
                raise Skip("duplicate id")
            seen.add(rec["id"])
            records.append(rec)
        except Skip as why:
            skipped.append(_skipped(source, split, index, native, str(why)))
    return records, skipped


def load_files(
    source: str,
    paths: Iterable[str | Path],
    split: str = "train",
    max_solutions: int | None = None,
    problem_paths: Iterable[str | Path] = (),
) -> tuple[list[dict], list[dict]]:
    """``normalise`` over the rows of several files of one split, read in the order given
    (TACO's row positions count across them). ``problem_paths``: open-r1/codeforces
    files to join by id (Codeforces only)."""

    def rows():
        for path in paths:
            yield from read_rows(path, COLUMNS[source])

    problems = None
    if source == "codeforces" and problem_paths:
        problems = {}
        for path in problem_paths:
            for row in read_rows(path, ("id", "official_tests", "interaction_format")):
                problems[str(row["id"])] = row
    return normalise(source, rows(), split, max_solutions, problems)


# --- the shipped default set --------------------------------------------------------

# The shipped sets: "smoke" (the files in SHIPPED_DIR) and "trivial" (SHIPPED_DIR/trivial:
# one-line functions whose questions state the signature and examples, the only problems
# the embedded default's tiny model writes passing tests for; README.md there).
SHIPPED_SETS = ("smoke", "trivial")


def shipped_file(source: str, shipped_set: str = "smoke") -> Path:
    """The project's own seed file for ``source`` in ``shipped_set`` (its rows in the
    dataset's format)."""
    if source not in SOURCES:
        raise UserError(f"unknown seed source {source!r}; one of {', '.join(SOURCES)}")
    if shipped_set not in SHIPPED_SETS:
        raise UserError(
            f"config key evolve.seeds.shipped_set: {shipped_set!r} is not one of {', '.join(SHIPPED_SETS)}"
        )
    path = (SHIPPED_DIR if shipped_set == "smoke" else SHIPPED_DIR / shipped_set) / f"{source}.jsonl"
    if not path.is_file():
        raise UserError(f"the shipped seed file {path} is missing; reinstall the package")
    return path


def shipped_records(
    sources: Iterable[str] = SOURCES, shipped_set: str = "smoke"
) -> tuple[list[dict], list[dict]]:
    """(records, skipped) of a shipped seed set, source after source in ``sources`` order."""
    records, skipped = [], []
    for source in sources:
        r, s = load_files(source, [shipped_file(source, shipped_set)], "train")
        records += r
        skipped += s
    return records, skipped
