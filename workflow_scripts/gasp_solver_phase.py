# The GASP solver phase of one iteration (rule gasp_solver_phase).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"gasp {w.gmethod} s{w.gseed} iteration {w.gi} solver", snakemake.log[0]):
    gasp.run_solver_phase(
        snakemake.params.cfg,
        w.gmethod,
        int(w.gseed),
        int(w.gi),
        snakemake.params.model_dir,
        i.state,
        list(i.accepted),
        str(snakemake.output.summary).rsplit("/", 1)[0],
    )
