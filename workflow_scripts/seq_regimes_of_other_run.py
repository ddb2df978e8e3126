from selfplay.errors import UserError
from selfplay.pipeline.step import step

with step("seq_regimes_of_other_run", snakemake.log[0]):
    raise UserError(f"{snakemake.output[0]} is missing: {snakemake.params.hint}")
