# GASP Tables 1-4 and the figures of the evaluated checkpoints (rule gasp_eval_tables).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

p, i = snakemake.params, snakemake.input
with step("gasp evaluation tables", snakemake.log[0]):
    greedy_keys = [(b, t) for b, _ in p.greedy for t in p.greedy_tags]
    selected_keys = [(b, t) for b, _ in p.greedy for t in p.selected_tags]
    gasp.write_eval_tables(
        p.cfg,
        list(p.tags),
        dict(zip(p.tags, i.sampled)),
        dict(zip(p.tags, i.goalposts)),
        {**dict(zip(greedy_keys, i.greedy)), **dict(zip(selected_keys, i.greedy_selected))},
        list(p.methods),
        dict(snakemake.output.items()),
        selections=list(i.selections),
    )
