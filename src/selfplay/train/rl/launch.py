"""Running a training function in N processes, one per GPU, with ``accelerate launch``.

A workflow job that asked for more than one GPU does not train in its own process: it
writes what to call into a job file and starts

    python -m accelerate.commands.launch --config_file config/accelerate/<engine>.yaml \\
        --num_processes <gpus> --num_machines 1 -m selfplay.train.rl.launch <job file>

(:func:`launch_command`). Every process then runs :func:`main`, which imports the named
function (``"module:function"``), calls it with the job's keyword arguments and ends
the process group cleanly. The function is the same one a single-process job calls
(for example ``selfplay.pipeline.evolve:grpo_round``): under the launcher GRPO gathers
what it needs across processes and only the main process writes (see ``grpo``'s module
doc).

The shipped configs (``config/accelerate/``) are for one node:

- ``lora_ddp.yaml``: data parallel. A LoRA adapter is a few million parameters; every
  GPU holds the frozen base model and the adapter's gradients are averaged.
- ``full_fsdp.yaml``: PyTorch FSDP2, full shard, for full fine-tuning: the float32
  master weights, gradients and AdamW state are split over the GPUs (paper 002's 4B
  policy needs ~60 GiB of them on one GPU), and gathered whole on the main process for
  saving.

Both engines come with torch and accelerate, which the project already requires;
DeepSpeed ZeRO would do the same sharding as a new dependency with its own CUDA build.
``--num_processes`` on the command line overrides the configs' placeholder of 8.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ...errors import UserError

ENTRY_MODULE = "selfplay.train.rl.launch"
# Which engine trains which kind of fine-tuning (see the module doc).
CONFIG_FILES = {"lora": "lora_ddp.yaml", "full": "full_fsdp.yaml"}
SRC = Path(__file__).resolve().parents[3]
DEFAULT_CONFIG_DIR = SRC.parent / "config" / "accelerate"


def config_file(finetune: str, config_dir: str | os.PathLike | None = None) -> Path:
    """The accelerate config for ``finetune`` ("lora" or "full") in ``config_dir``."""
    if finetune not in CONFIG_FILES:
        raise UserError(
            f"training setting 'finetune' = {finetune!r} has no accelerate config: expected "
            f"one of {', '.join(CONFIG_FILES)}"
        )
    path = Path(config_dir or DEFAULT_CONFIG_DIR) / CONFIG_FILES[finetune]
    if not path.is_file():
        raise UserError(f"accelerate config {path} is missing (config/accelerate/ of the repository)")
    return path


def launch_command(
    processes: int,
    config: str | os.PathLike,
    job_file: str | os.PathLike,
    main_process_port: int | None = None,
) -> list[str]:
    """The command that runs :func:`main` on ``job_file`` in ``processes`` processes."""
    if not isinstance(processes, int) or processes < 2:
        raise UserError(f"a launched training needs at least 2 processes, got {processes!r}")
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        str(config),
        "--num_processes",
        str(processes),
        "--num_machines",
        "1",
    ]
    if main_process_port is not None:
        command += ["--main_process_port", str(main_process_port)]
    return command + ["-m", ENTRY_MODULE, str(job_file)]


def write_job(path: str | os.PathLike, function: str, kwargs: dict[str, Any]) -> Path:
    """Write what every launched process calls: ``function`` ("module:name") with ``kwargs`` (JSON)."""
    if ":" not in function:
        raise UserError(f"launched function {function!r} must be written as 'module:function'")
    path = Path(path)
    path.write_text(json.dumps({"function": function, "kwargs": kwargs}, sort_keys=True, default=str) + "\n")
    return path


def run_launched(
    function: str,
    kwargs: dict[str, Any],
    *,
    processes: int,
    config: str | os.PathLike,
    log_path: str | os.PathLike | None = None,
    main_process_port: int | None = None,
) -> None:
    """Call ``function(**kwargs)`` in ``processes`` processes under ``accelerate launch`` and
    wait; their output is appended to ``log_path`` (else inherited). Raises RuntimeError,
    with the exit status, when the launch fails."""
    with tempfile.TemporaryDirectory(prefix="selfplay-launch-") as tmp:
        job = write_job(Path(tmp) / "job.json", function, kwargs)
        command = launch_command(processes, config, job, main_process_port)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
        }
        if log_path is None:
            code = subprocess.run(command, env=env).returncode
        else:
            with open(log_path, "a") as log:
                log.write(f"launching: {' '.join(command)}\n")
                log.flush()
                code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    if code != 0:
        where = f"; see {log_path}" if log_path else ""
        raise RuntimeError(
            f"{function} in {processes} processes failed (accelerate launch exit status {code}){where}"
        )


def _resolve(function: str):
    module, _, name = function.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"cannot find launched function {function!r}: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    """Entry point of every launched process: run the job file's call, then leave the process group."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(f"usage: python -m {ENTRY_MODULE} JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text())
    import torch.distributed as dist

    try:
        _resolve(job["function"])(**job["kwargs"])
        if dist.is_available() and dist.is_initialized():
            dist.barrier()  # the main process may still be writing the outputs
    finally:
        # Without this, gloo's threads abort the interpreter at exit ("terminate called
        # without an active exception"), and the launcher reports the run as failed.
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
