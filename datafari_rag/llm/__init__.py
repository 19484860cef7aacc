"""Where the LLM is called: one LlmService interface, an OpenAI-compatible implementation."""

from .openai_service import OpenAiLlmService
from .service import ChatMessage, LlmError, LlmService, Usage

__all__ = ["ChatMessage", "LlmError", "LlmService", "OpenAiLlmService", "Usage"]
