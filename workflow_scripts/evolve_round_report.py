# EvolveCoder Table 2, Figures 4-6 and the yield table from every round's files.
from selfplay.pipeline.step import step
from selfplay.report import evolve

i, o, p = snakemake.input, snakemake.output, snakemake.params
with step("evolve round tables", snakemake.log[0]):
    rounds = [(i[f"round{r}_suite"], i[f"round{r}_matrix"], i[f"round{r}_dataset"]) for r in p.rounds]
    evolve.table2(rounds, p.sources, o.table2_csv, o.table2_md)
    evolve.yield_table(rounds, o.yield_csv, o.yield_md)
    evolve.figure4(rounds, p.ks, o.figure4_png, o.figure4_pdf, o.figure4_csv)
    evolve.figure5(rounds, o.figure5_png, o.figure5_pdf, o.figure5_csv)
    evolve.figure6(rounds[-1], p.ks, o.figure6_png, o.figure6_pdf, o.figure6_csv)
