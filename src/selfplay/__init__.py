"""Reproducible pipeline for LLM self-play on code with verified rewards."""

__version__ = "0.1.0"
