"""Semantic de-duplication of seed problems and the numbers behind EvolveCoder's Table 1
and Figures 1-2 (paper 002, Sec. 2.1).

Input: records ``{"id", "source", ...}`` in a fixed order and their unit-length
embeddings (one row per record, ``selfplay.embeddings.embed_texts``), so that a dot product is a
cosine similarity.

Duplicates. Two problems are near-duplicates when their cosine is **strictly greater**
than the threshold (0.9 in the paper, which says "greater than 0.9"; a pair at exactly
0.9 stays apart). Cosines are computed in float64 and rounded to float32, the
precision of the embeddings, before they are compared; this makes every number the
same whatever the block size (a float32 product can differ in its last bit between a
block of one row and a block of many).
Near-duplicate pairs are edges of a graph; each connected group of that graph (two
problems can land in one group through a chain even if their own cosine is lower)
keeps one representative and drops the rest. The representative is drawn at random but
reproducibly: every member gets the key sha256("<seed>:<id>") and the smallest key
wins. The draw depends on the seed and on the group's ids only, not on the order of
the input or on other groups, and changes when the seed does.

Scale. The cosine matrix is never held whole: rows are processed in blocks of
``block_size`` (a block is ``block_size x n`` numbers, computed in float64; 512 rows
against 75k problems is about 300 MB). One pass over the blocks collects the near-duplicate pairs,
each problem's k nearest neighbours, and each problem's best match in every source.

Figure 1 (cross-source duplication). For sources A and B, ``overlap[A][B]`` is the
fraction of A's problems that have at least one problem of B at cosine above the
threshold, where a problem counts as its own match. So the diagonal is 1 by
definition, and off the diagonal the matrix is not symmetric (a small source can be
mostly covered by a large one, not the other way round). The fraction of A's problems
with a near-duplicate inside A other than themselves is reported beside it
(``within``).

Figure 2. For each problem, the mean cosine to its k = 10 nearest other problems, over
all problems before filtering and over the kept ones (neighbours also among the kept
ones only) after. With fewer than k + 1 problems the mean runs over all others; a
problem with no other problem gets NaN (None in ``figure2_values``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import UserError

THRESHOLD = 0.9
NEIGHBOURS = 10
BLOCK_SIZE = 512


@dataclass
class Scan:
    """What one blockwise pass over the cosine matrix found.

    ``pairs``: (m, 2) int64 index pairs i < j with cosine above the threshold, sorted;
    ``cosines``: their cosines; ``knn_mean``: per problem, the mean cosine to its k
    nearest other problems; ``source_best``: per problem and source (``sources``
    order), the highest cosine to a problem of that source other than itself (-inf
    when there is none).
    """

    pairs: np.ndarray
    cosines: np.ndarray
    knn_mean: np.ndarray
    sources: list[str] = field(default_factory=list)
    source_best: np.ndarray | None = None


@dataclass
class DedupResult:
    """``kept``: ids kept, in input order. ``dropped``: one row per removed id, in input
    order: ``{"id", "source", "representative", "representative_source", "cosine"
    (to the representative), "group_size"}``. ``groups``: every group of two or more,
    as ids in input order, ordered by their first member."""

    kept: list[str]
    dropped: list[dict]
    groups: list[list[str]]
    threshold: float
    seed: int


def check_embeddings(embeddings: np.ndarray, n: int | None = None) -> np.ndarray:
    """``embeddings`` as a float32 2-d array with unit rows (a cosine is then a dot)."""
    emb = np.asarray(embeddings, dtype=np.float32)
    if emb.ndim != 2:
        raise UserError(f"embeddings must be a 2-d array, not shape {emb.shape}")
    if n is not None and emb.shape[0] != n:
        raise UserError(f"{emb.shape[0]} embeddings for {n} records")
    if emb.shape[0]:
        norms = np.linalg.norm(emb, axis=1)
        if np.any(np.abs(norms - 1.0) > 1e-3):
            raise UserError("embeddings must have unit L2 norm (selfplay.embeddings.normalise_rows)")
    return emb


def scan(
    embeddings: np.ndarray,
    threshold: float = THRESHOLD,
    k: int = NEIGHBOURS,
    sources: Sequence[str] | None = None,
    block_size: int = BLOCK_SIZE,
) -> Scan:
    """One blockwise pass over ``embeddings @ embeddings.T`` (see ``Scan``). ``sources``
    (one name per row) asks for the per-source best matches as well."""
    emb = check_embeddings(embeddings)
    n = emb.shape[0]
    if block_size < 1:
        raise UserError(f"block size must be at least 1, not {block_size}")
    limit = np.float32(threshold)
    names: list[str] = []
    columns: list[np.ndarray] = []
    if sources is not None:
        if len(sources) != n:
            raise UserError(f"{len(sources)} source names for {n} embeddings")
        names = sorted(set(sources))
        src = np.asarray(sources, dtype=object)
        columns = [np.flatnonzero(src == name) for name in names]
    best = np.full((n, len(names)), -np.inf, dtype=np.float32) if sources is not None else None
    knn = np.full(n, np.nan, dtype=np.float64)
    kk = min(k, n - 1)
    pair_chunks, cos_chunks = [], []
    emb64 = emb.astype(np.float64)
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        # float64 products rounded to float32: the same numbers whatever the block shape
        sims = (emb64[start:stop] @ emb64.T).astype(np.float32)
        rows = np.arange(stop - start)
        sims[rows, rows + start] = -np.inf  # a problem is not its own neighbour
        # near-duplicate pairs, each once (i < j)
        bi, bj = np.nonzero(sims > limit)
        gi = bi + start
        upper = bj > gi
        pair_chunks.append(np.stack([gi[upper], bj[upper]], axis=1))
        cos_chunks.append(sims[bi[upper], bj[upper]])
        if kk > 0:
            top = np.partition(sims, n - kk, axis=1)[:, n - kk :]
            knn[start:stop] = top.astype(np.float64).mean(axis=1)
        for c, cols in enumerate(columns):
            if cols.size:
                best[start:stop, c] = sims[:, cols].max(axis=1)
    pairs = np.concatenate(pair_chunks) if pair_chunks else np.zeros((0, 2), dtype=np.int64)
    cosines = np.concatenate(cos_chunks) if cos_chunks else np.zeros(0, dtype=np.float32)
    order = np.lexsort((pairs[:, 1], pairs[:, 0])) if len(pairs) else np.zeros(0, dtype=np.int64)
    return Scan(pairs.astype(np.int64)[order], cosines[order], knn, names, best)


def groups_of(n: int, pairs: np.ndarray) -> list[list[int]]:
    """Connected groups (two or more members) of the graph on ``n`` nodes with edges
    ``pairs``, as sorted index lists ordered by their smallest member."""
    if n == 0 or len(pairs) == 0:
        return []
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    members: dict[int, list[int]] = {}
    for index, label in enumerate(labels.tolist()):
        members.setdefault(label, []).append(index)
    return sorted((m for m in members.values() if len(m) > 1), key=lambda m: m[0])


def draw_key(seed: int, record_id: str) -> str:
    """The seeded random key of one id; the smallest key of a group is its representative."""
    return hashlib.sha256(f"{int(seed)}:{record_id}".encode()).hexdigest()


def _ids(records: Sequence[Mapping]) -> list[str]:
    ids = [str(r["id"]) for r in records]
    if len(set(ids)) != len(ids):
        dup = next(i for i, count in Counter(ids).items() if count > 1)
        raise UserError(f"record ids must be unique; {dup!r} occurs more than once")
    return ids


def deduplicate(
    records: Sequence[Mapping],
    embeddings: np.ndarray,
    threshold: float = THRESHOLD,
    seed: int = 0,
    block_size: int = BLOCK_SIZE,
    scanned: Scan | None = None,
) -> DedupResult:
    """Collapse every group of near-duplicates to one seeded representative (module
    docstring). ``scanned``: a ``scan`` of the same embeddings and threshold, to reuse."""
    ids = _ids(records)
    emb = check_embeddings(embeddings, len(ids))
    found = scanned if scanned is not None else scan(emb, threshold, 0, None, block_size)
    groups = groups_of(len(ids), found.pairs)
    representative: dict[int, int] = {}
    sizes: dict[int, int] = {}
    for members in groups:
        chosen = min(members, key=lambda i: draw_key(seed, ids[i]))
        for i in members:
            representative[i] = chosen
            sizes[i] = len(members)
    kept, dropped = [], []
    for i, rid in enumerate(ids):
        rep = representative.get(i, i)
        if rep == i:
            kept.append(rid)
            continue
        dropped.append(
            {
                "id": rid,
                "source": records[i].get("source"),
                "representative": ids[rep],
                "representative_source": records[rep].get("source"),
                "cosine": round(float(np.float32(emb[i].astype(np.float64) @ emb[rep])), 6),
                "group_size": sizes[i],
            }
        )
    return DedupResult(kept, dropped, [[ids[i] for i in m] for m in groups], float(threshold), int(seed))


# --- the paper's table and figures ------------------------------------------------


def source_counts(records: Sequence[Mapping], keep: set[str] | None = None) -> dict[str, int]:
    """Problems per source (only those whose id is in ``keep``, when given)."""
    counts: dict[str, int] = {}
    for r in records:
        if keep is None or str(r["id"]) in keep:
            counts[r["source"]] = counts.get(r["source"], 0) + 1
    return counts


def table1_counts(
    records: Sequence[Mapping], result: DedupResult, order: Sequence[str] | None = None
) -> list[dict]:
    """Table 1's first two columns: one row per source (``order``, else sorted names)
    with ``before`` and ``after`` counts, then an ``Overall`` row."""
    before = source_counts(records)
    after = source_counts(records, set(result.kept))
    names = list(order) if order is not None else sorted(before)
    rows = [{"source": s, "before": before.get(s, 0), "after": after.get(s, 0)} for s in names]
    rows.append(
        {
            "source": "Overall",
            "before": sum(r["before"] for r in rows),
            "after": sum(r["after"] for r in rows),
        }
    )
    return rows


def overlap_matrix(
    records: Sequence[Mapping],
    embeddings: np.ndarray,
    threshold: float = THRESHOLD,
    block_size: int = BLOCK_SIZE,
    scanned: Scan | None = None,
) -> dict:
    """Figure 1's matrix (module docstring): ``{"sources", "overlap" (rows: A, columns: B),
    "within", "threshold"}``."""
    sources = [str(r["source"]) for r in records]
    emb = check_embeddings(embeddings, len(sources))
    found = (
        scanned
        if scanned is not None and scanned.source_best is not None
        else scan(emb, threshold, 0, sources, block_size)
    )
    names = found.sources
    src = np.asarray(sources, dtype=object)
    hit = found.source_best > np.float32(threshold)
    matrix, within = [], []
    for a, name in enumerate(names):
        rows = np.flatnonzero(src == name)
        line = [1.0 if b == a else float(hit[rows, b].mean()) for b in range(len(names))]
        matrix.append(line)
        within.append(float(hit[rows, a].mean()))
    return {"sources": names, "overlap": matrix, "within": within, "threshold": float(threshold)}


def knn_mean_cosine(embeddings: np.ndarray, k: int = NEIGHBOURS, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """Per row, the mean cosine to its ``k`` nearest other rows (Figure 2's quantity)."""
    return scan(embeddings, np.inf, k, None, block_size).knn_mean


def figure2_values(
    records: Sequence[Mapping],
    embeddings: np.ndarray,
    result: DedupResult,
    k: int = NEIGHBOURS,
    block_size: int = BLOCK_SIZE,
    before: np.ndarray | None = None,
) -> dict[str, list[float]]:
    """Figure 2's samples: ``{"before": [...], "after": [...]}`` (after: the kept
    problems among themselves). ``before`` may be passed in from an earlier ``scan``."""
    ids = _ids(records)
    emb = check_embeddings(embeddings, len(ids))
    values_before = before if before is not None else knn_mean_cosine(emb, k, block_size)
    keep = set(result.kept)
    rows = [i for i, rid in enumerate(ids) if rid in keep]
    values_after = knn_mean_cosine(emb[rows], k, block_size) if rows else np.zeros(0)
    return {"before": _finite(values_before), "after": _finite(values_after)}


def _finite(values: np.ndarray) -> list[float | None]:
    """Plain floats for JSON, None where there was no neighbour (NaN)."""
    return [None if np.isnan(v) else float(v) for v in np.asarray(values, dtype=np.float64)]


def summary(
    records: Sequence[Mapping],
    embeddings: np.ndarray,
    threshold: float = THRESHOLD,
    seed: int = 0,
    k: int = NEIGHBOURS,
    block_size: int = BLOCK_SIZE,
    order: Sequence[str] | None = None,
) -> tuple[DedupResult, dict]:
    """De-duplicate and compute everything the report needs, from one pass over the
    full matrix (plus one over the kept problems). Returns the result and a
    JSON-ready statistics dict: ``{"threshold", "seed", "k", "table1", "figure1",
    "figure2": {"before", "after"}}``."""
    sources = [str(r["source"]) for r in records]
    emb = check_embeddings(embeddings, len(sources))
    found = scan(emb, threshold, k, sources, block_size)
    result = deduplicate(records, emb, threshold, seed, block_size, scanned=found)
    stats = {
        "threshold": float(threshold),
        "seed": int(seed),
        "k": int(k),
        "table1": table1_counts(records, result, order),
        "figure1": overlap_matrix(records, emb, threshold, block_size, scanned=found),
        "figure2": figure2_values(records, emb, result, k, block_size, before=found.knn_mean),
    }
    return result, stats
