"""The yield-matched regimes E0-E3 of paper 000 (Appendix F).

With P reference programs per round, SEQ probability p and verification yields
r_SEQ, r_SINQ (validated / attempted, measured in E0), the expected number of
verified pairs per round is ``K(P, p) = P (p r_SEQ + (1 - p) r_SINQ)``.

* E2 chooses p so that SEQ and SINQ give equal expected counts:
  ``p r_SEQ = (1 - p) r_SINQ``, i.e. ``p = r_SINQ / (r_SEQ + r_SINQ)`` (the paper's
  96%), at E0's P.
* E3 is pure SINQ with P chosen so that its expected count matches E2's:
  ``P_E3 = K_E2 / r_SINQ`` (the paper's 38.04, run as 40).

Both are computed from E0's Table 6 by a rule, never typed in; E2 and E3's configs
name that file (``seq.regime``), and the workflow reads their p and P from it.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from ...curriculum.difficulty import round_half_up
from ...errors import UserError


def yields_from_table6(csv_path: str) -> dict[str, float]:
    """{"seq": r_SEQ, "sinq": r_SINQ} from a Table 6 CSV (validated / attempts)."""
    out = {}
    with open(csv_path, newline="") as fh:
        for row in csv.DictReader(fh):
            attempts = int(row["Attempts"])
            if attempts <= 0:
                raise UserError(f"{csv_path}: no {row['Game']} attempts, so its yield is unknown")
            out[row["Game"].lower()] = int(row["Total Validated"]) / attempts
    if set(out) != {"seq", "sinq"}:
        raise UserError(f"{csv_path}: expected rows for SEQ and SINQ, found {sorted(out)}")
    return out


def expected_verified(p_total: float, p_seq: float, r_seq: float, r_sinq: float) -> float:
    """K(P, p) = P (p r_SEQ + (1 - p) r_SINQ)."""
    return p_total * (p_seq * r_seq + (1 - p_seq) * r_sinq)


def regime_parameters(r_seq: float, r_sinq: float, p_e0: int, p_decimals: int = 2) -> dict:
    """E2's SEQ probability (rounded to ``p_decimals``) and E3's P, with the arithmetic."""
    if not (0 <= r_seq <= 1 and 0 <= r_sinq <= 1) or r_seq + r_sinq == 0:
        raise UserError(f"yields must lie in [0, 1] and not both be 0 (r_SEQ={r_seq}, r_SINQ={r_sinq})")
    if r_sinq == 0:
        raise UserError("r_SINQ is 0: no SINQ-only P can match any verified count")
    p_exact = r_sinq / (r_seq + r_sinq)
    p_e2 = round(p_exact, p_decimals)
    k_e2 = expected_verified(p_e0, p_e2, r_seq, r_sinq)
    p_e3_exact = k_e2 / r_sinq
    return {
        "r_seq": r_seq,
        "r_sinq": r_sinq,
        "P_e0": p_e0,
        "e2": {
            "seq_probability": p_e2,
            "seq_probability_exact": p_exact,
            "P": p_e0,
            "expected_seq": p_e0 * p_e2 * r_seq,
            "expected_sinq": p_e0 * (1 - p_e2) * r_sinq,
            "expected_verified": k_e2,
        },
        "e3": {
            "seq_probability": 0.0,
            "P_exact": p_e3_exact,
            "P": max(1, round_half_up(p_e3_exact)),
            "expected_verified": max(1, round_half_up(p_e3_exact)) * r_sinq,
        },
    }


def write_regimes(table6_csv: str, p_e0: int | None, out: str) -> dict:
    if p_e0 is None:
        raise UserError("seq.sources.per_round is null: the regimes need E0's P as a number")
    y = yields_from_table6(table6_csv)
    params = regime_parameters(y["seq"], y["sinq"], p_e0)
    params["from"] = table6_csv
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(params, indent=2, sort_keys=True) + "\n")
    return params


def apply_regime(cfg: dict, regimes_path: str | None) -> dict:
    """A copy of ``cfg`` with ``seq.regime`` (arm e2 or e3) turned into the regime's
    seq_probability and per_round, read from E0's regimes file. A missing file is a
    one-line error."""
    import copy

    regime = cfg["seq"]["regime"]
    path = Path(regimes_path or regime["from"])
    if not path.is_file():
        raise UserError(
            f"seq.regime {regime['arm']} needs {path}, computed from E0's yields: run E0 first, then "
            f"`snakemake --configfile config/papers/seq.yaml {path}`"
        )
    params = json.loads(path.read_text())
    arm = params[regime["arm"]]
    if not math.isfinite(arm["seq_probability"]):
        raise UserError(f"{path}: {regime['arm']} has no usable SEQ probability")
    cfg = copy.deepcopy(cfg)
    cfg["seq"]["game"]["seq_probability"] = float(arm["seq_probability"])
    cfg["seq"]["sources"]["per_round"] = int(arm["P"])
    return cfg
