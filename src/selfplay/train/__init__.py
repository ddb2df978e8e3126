"""Fine-tuning: LoRA supervised fine-tuning through TRL + PEFT (see ``sft``)."""

from .sft import TrainingSkipped, train_lora_sft

__all__ = ["TrainingSkipped", "train_lora_sft"]
