"""Game tracks: each sub-package holds one game's prompts, output parsing and training records."""
