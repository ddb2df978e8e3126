"""Sandbox and pass-matrix rates with job processes forked from the template versus from
the server, measured side by side in one run at equal isolation.

The baseline is this checkout's source tree with the fork server's files (``SWAPPED``)
of an earlier commit (default: the last one that forked every job process from the
fork server itself); everything else, the harness and the pass matrix included, is the
same code. Each
benchmark (``bench/sandbox_bench.py``, ``bench/pass_matrix_bench.py``) runs for each
tree in turn, twice, alternating, so both see the same load; the better of the two
rounds of each is reported (the machine may be shared). Results:
bench/results/sandbox_template.json and .md.

    .venv/bin/python bench/template_bench.py [--baseline REV] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "ec2e170"  # the last commit whose fork server forked job processes itself
ROUNDS = 2


# The files the template changed; the baseline takes them from the baseline revision.
SWAPPED = ("forkserver.py", "confine.py", "pool.py")


def baseline_tree(rev: str, where: Path) -> Path:
    """This checkout's src/ with the fork server's files (``SWAPPED``) taken from ``rev``."""
    tree = where / "src"
    shutil.copytree(ROOT / "src", tree, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    package = tree / "selfplay" / "sandbox"
    (package / "template.py").unlink()
    for name in SWAPPED:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:src/selfplay/sandbox/{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (package / name).write_text(text)
    return tree


def run(script: str, src: Path | None, out: Path, quick: bool) -> dict:
    env = dict(os.environ)
    env.pop("SELFPLAY_BENCH_SRC", None)
    if src is not None:
        env["SELFPLAY_BENCH_SRC"] = str(src)
    argv = [sys.executable, str(ROOT / "bench" / script), "--out", str(out)] + (["--quick"] if quick else [])
    subprocess.run(argv, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def sandbox_rates(report: dict) -> dict:
    return {
        "checks_per_s": report["checks"]["forkserver"]["checks_per_s"],
        "empty_runs_per_s": report["floor"]["forkserver"]["runs_per_s"],
        "latency_ms": report["floor"]["forkserver"]["latency_ms_one_at_a_time"],
        "forked_from": report["isolation"].get("forked_from", "server"),
    }


def matrix_rates(report: dict) -> dict:
    rates = {
        f"{corpus} / {mode}": numbers["cells_per_s"]
        for corpus, modes in report["results"].items()
        for mode, numbers in modes.items()
        if isinstance(numbers, dict)
    }
    rates["forked_from"] = report["isolation"].get("forked_from", "server")
    return rates


def best(samples: list[dict], lower_is_better: tuple[str, ...] = ("latency_ms",)) -> dict:
    out = {}
    for key in samples[0]:
        values = [sample[key] for sample in samples]
        if isinstance(values[0], str):
            out[key] = values[0]
        else:
            out[key] = min(values) if key in lower_is_better else max(values)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the baseline sandbox package")
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "sandbox_template.json"))
    args = parser.parse_args()
    load_before = os.getloadavg()
    samples: dict[str, dict[str, list[dict]]] = {
        "sandbox": {"server": [], "template": []},
        "pass_matrix": {"server": [], "template": []},
    }
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(args.baseline, Path(tmp))
        for round_ in range(1 if args.quick else ROUNDS):
            for label, src in (("server", base), ("template", None)):
                out = Path(tmp) / f"sandbox-{label}-{round_}.json"
                samples["sandbox"][label].append(sandbox_rates(run("sandbox_bench.py", src, out, args.quick)))
                out = Path(tmp) / f"matrix-{label}-{round_}.json"
                samples["pass_matrix"][label].append(
                    matrix_rates(run("pass_matrix_bench.py", src, out, args.quick))
                )
                print(f"round {round_ + 1}: {label} done", flush=True)
    load_after = os.getloadavg()
    results = {
        bench: {label: best(rows) for label, rows in by_label.items()} for bench, by_label in samples.items()
    }
    for bench, by_label in results.items():
        assert (
            by_label["server"]["forked_from"] == "server"
            and by_label["template"]["forked_from"] == "template"
        ), f"{bench}: the trees did not fork as labelled: {by_label}"
    report = {
        "benchmark": "job processes forked from the template vs from the server, equal isolation",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "baseline": args.baseline,
        "rounds": 1 if args.quick else ROUNDS,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "results": results,
        "samples": samples,
    }
    out = Path(args.out)
    out.write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        f"# Sandbox rates: forked from the template vs from the server ({report['date'][:10]}, "
        f"{os.cpu_count()} cores)",
        "",
        f"Baseline: {', '.join(SWAPPED)} of {args.baseline} (every job forked from the fork server); "
        "the rest of the code is the same. Best of "
        f"{report['rounds']} alternating rounds; load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after.",
        "",
        "| benchmark | measure | forked from server | forked from template | ratio |",
        "|---|---|---|---|---|",
    ]
    for bench, by_label in results.items():
        for key, value in by_label["server"].items():
            if key == "forked_from":
                continue
            new = by_label["template"][key]
            lines.append(f"| {bench} | {key} | {value} | {new} | {new / value:.2f} |")
    lines.append("")
    out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
