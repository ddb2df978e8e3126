# One GASP teacher phase of one iteration (rule gasp_teacher_phase).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import optional_path, step

w, i, o = snakemake.wildcards, snakemake.input, snakemake.output
with step(f"gasp {w.gmethod} s{w.gseed} iteration {w.gi} {w.gphase}", snakemake.log[0]):
    gasp.run_teacher_phase(
        snakemake.params.cfg,
        w.gmethod,
        int(w.gseed),
        int(w.gi),
        w.gphase,
        snakemake.params.model_dir,
        optional_path(i.get("state")),
        optional_path(i.get("parents")),
        list(i.buffers),
        str(snakemake.output.summary).rsplit("/", 1)[0],
    )
