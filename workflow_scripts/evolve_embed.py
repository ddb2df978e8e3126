# Sentence embeddings of the seed questions, or a bundle's restored (rule evolve_embed).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

i, o = snakemake.input, snakemake.output
with step("evolve embed", snakemake.log[0]):
    if i.restored:
        vectors, meta = i.restored
        evolve.restore_embeddings(i.seeds, vectors, meta, o.vectors, o.meta)
    else:
        evolve.embed_seeds(snakemake.params.cfg, i.seeds, o.vectors, o.meta, model=snakemake.params.embedder)
