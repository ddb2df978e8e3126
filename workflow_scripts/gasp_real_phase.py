# A GASP real-data RLVR phase of one iteration (rule gasp_real_phase).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"gasp {w.gmethod} s{w.gseed} iteration {w.gi} real data", snakemake.log[0]):
    gasp.run_real_phase(
        snakemake.params.cfg,
        w.gmethod,
        int(w.gseed),
        int(w.gi),
        snakemake.params.model_dir,
        optional_path(i.get("state")),
        i.rows,
        str(snakemake.output.summary).rsplit("/", 1)[0],
    )
