"""ScriptedLLMServer itself: routes, strict conversation checks, an exhausted script."""

from __future__ import annotations

import anthropic
import openai
import pytest

from evoci.agents.scripted import ScriptedLLMServer, text

from .conftest import API_KEY


def test_it_rejects_what_the_real_apis_reject(serve) -> None:
    server = serve([text("a"), text("b")])
    client = openai.OpenAI(api_key=API_KEY, base_url=server.base_url("openai"), max_retries=0)
    with pytest.raises(openai.BadRequestError, match="does not answer a preceding tool call"):
        client.chat.completions.create(model="m", messages=[{"role": "tool", "tool_call_id": "x", "content": "?"}])
    claude = anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url("anthropic"), max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="roles must alternate"):
        claude.messages.create(model="m", max_tokens=10, messages=[{"role": "assistant", "content": "hi"}])


def test_an_exhausted_script_answers_400(serve) -> None:
    server = serve([text("only one")])
    client = openai.OpenAI(api_key=API_KEY, base_url=server.base_url("openai"), max_retries=0)
    assert client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}]).choices[0].message.content == "only one"
    with pytest.raises(openai.BadRequestError, match="no reply left"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert [r.protocol for r in server.requests] == ["openai", "openai"]


def test_it_is_a_context_manager() -> None:
    with ScriptedLLMServer([]) as server:
        assert server.url.startswith("http://127.0.0.1:")
    assert server._httpd is None
