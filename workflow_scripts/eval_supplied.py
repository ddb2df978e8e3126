# A gated benchmark file that must be supplied by the user: say how, and fail.
from selfplay.errors import UserError
from selfplay.pipeline.step import step

with step(f"eval_supplied {snakemake.wildcards.bench}", snakemake.log[0]):
    raise UserError(
        f"{snakemake.output.file} is missing: this benchmark's data cannot be downloaded "
        f"automatically ({snakemake.params.note}); put the file there, or set "
        f"evaluation.benchmarks.{snakemake.wildcards.bench}.path to where it is"
    )
