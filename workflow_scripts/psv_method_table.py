# PSV Tables 1-3: the methods config psv.tables.<table> names, on every setting's evaluation sets.
from selfplay.pipeline.step import step
from selfplay.report import psv as psv_tables

with step(f"psv {snakemake.wildcards.table}", snakemake.log[0]):
    psv_tables.method_table_of(
        snakemake.params.cfg, snakemake.wildcards.table, snakemake.output.csv, snakemake.output.md
    )
