"""Generation backends behind one interface (transformers, vllm, replay, openai).

Heavy libraries (torch, transformers, vllm) are imported only by the backend that
needs them, so importing this package stays cheap.
"""

from .base import Backend, GenerationRequest, SamplingParams, recording_key, request_seed
from .factory import make_backend
from .recording import generate_and_record

__all__ = [
    "Backend",
    "GenerationRequest",
    "SamplingParams",
    "generate_and_record",
    "make_backend",
    "recording_key",
    "request_seed",
]
