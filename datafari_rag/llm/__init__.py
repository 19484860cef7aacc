"""Where the LLM is called: one LlmService interface, an OpenAI-compatible implementation."""

from .openai_service import OpenAiLlmService
from .service import AssistantTurn, ChatMessage, LlmError, LlmService, ToolCall, ToolCallingLlm, Usage

__all__ = [
    "AssistantTurn",
    "ChatMessage",
    "LlmError",
    "LlmService",
    "OpenAiLlmService",
    "ToolCall",
    "ToolCallingLlm",
    "Usage",
]
