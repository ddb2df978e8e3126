# EvolveCoder Figure 1 (cross-source duplication) or Figure 2 (nearest-neighbour similarity).
from selfplay.pipeline.step import step
from selfplay.records import read_json
from selfplay.report import evolve_seeds

fig = snakemake.wildcards.fig
with step(f"evolve figure {fig}", snakemake.log[0]):
    draw = evolve_seeds.figure1 if fig == "1" else evolve_seeds.figure2
    draw(read_json(snakemake.input[0]), snakemake.output.png, snakemake.output.pdf, snakemake.output.csv)
