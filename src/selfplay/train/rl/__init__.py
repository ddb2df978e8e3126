"""Reinforcement learning on TRL: GRPO (``grpo``), its settings (``settings``) and the
advantage estimators (``advantages``: TRL's group-relative one, and Absolute Zero's
task-relative REINFORCE++ that the trainer swaps in).

Importing this package does not import torch or TRL; training does.
"""

from .advantages import group_relative_advantages, task_relative_advantages
from .grpo import train_grpo
from .settings import GRPOSettings, LoraSettings

__all__ = [
    "GRPOSettings",
    "LoraSettings",
    "group_relative_advantages",
    "task_relative_advantages",
    "train_grpo",
]
