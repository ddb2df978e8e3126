"""Cluster helpers: a real single-node SLURM cluster for tests and local trials.

``selfplay.cluster.local_slurm`` starts and stops it (``python -m
selfplay.cluster.local_slurm start|stop|status``, or ``with LocalSlurm(): ...``).
"""

__all__ = ["LocalSlurm", "LocalSlurmError", "missing_pieces"]


def __getattr__(name):
    # Imported on first use so that `python -m selfplay.cluster.local_slurm` does not
    # load the module twice (runpy warns when the package already imported it).
    if name in __all__:
        from . import local_slurm

        return getattr(local_slurm, name)
    raise AttributeError(name)
