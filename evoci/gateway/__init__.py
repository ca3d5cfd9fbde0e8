"""The model gateway: an agent sandbox's one way out, to its model and nothing else.

An agent sandbox (bubblewrap or Docker) has no network. When an agent needs a model, evoci serves
a gateway for the attempt: an HTTP server on a **Unix socket** on the host, bound into the sandbox
and bridged to a **loopback port inside the sandbox's own network namespace** by a tiny bridge
process started in there, which hands each connection over to the gateway (``bridge.py``). The gateway forwards the three wire protocols the agent CLIs speak —
Anthropic Messages, OpenAI Chat Completions and OpenAI Responses, streamed (SSE) or not — to the
one configured upstream, injects the real API key (the sandbox holds a dummy token), and accounts
every call from its usage events. Nothing else is reachable: no host loopback service, no other
host, no DNS.

The contract other parts of evoci build on (presets, protocols)
--------------------------------------------------------------

1. **Asking for it.** An agent that needs a model carries a ``GatewayConfig`` (for
   ``kind="command"``: the ``gateway`` option, ``AgentConfig(kind="command", options={"command":
   [...], "gateway": {"provider": "anthropic", "base_url": ..., "max_cost_usd": 5}})``).
   ``needs_gateway(agent_config)`` says whether it does. The agent opens the gateway for its
   attempt with ``open_gateway(config, on_call=ctx.on_call, transcript=path)`` and runs its command
   with ``sandbox.exec(argv, env=..., timeout=..., gateway=gw.endpoint)``: the local sandbox binds
   the socket's folder at ``SANDBOX_DIR`` and starts the bridge in the command's network namespace;
   the Docker sandbox does the same in a ``network=none`` container. ``gateway=None`` (the
   default) is a sandbox without any network — what tests and agents without a model get.

2. **What the command sees** (``sandbox_env()``; also the template placeholders of
   ``placeholders()``)::

       EVOCI_GATEWAY_URL   = http://127.0.0.1:4780            ({gateway_url})
       ANTHROPIC_BASE_URL  = http://127.0.0.1:4780            (Messages: POST /v1/messages)
       OPENAI_BASE_URL     = http://127.0.0.1:4780/v1         ({openai_base_url}; Chat Completions
                                                               and Responses: POST /v1/chat/completions,
                                                               POST /v1/responses)
       ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_AUTH_TOKEN = DUMMY_KEY   ({dummy_key})

   The port is fixed (``SANDBOX_PORT``): every sandbox has its own network namespace. The dummy
   key is sent back by the CLI and replaced by the gateway; the real key is read on the host at
   call time (``api_key_env`` or ``api_key_secret``) and never enters the sandbox.

3. **Accounting.** The node execution key and the role reach the gateway through the
   ``on_call`` callback the node gives the agent (``AgentContext.on_call``, bound by
   ``tasks/agents.py`` to run, task, iteration, role and the node execution's id): the gateway
   calls it with one ``ModelCall`` per answered upstream call (tokens from the usage events,
   cost from ``evoci.agents.llm.prices`` — unknown price → ``cost_usd=None``, never 0 — latency,
   finish reason; failed attempts carry ``error``). The request/response transcript is written as
   JSON lines to ``transcript`` (the node's trajectory artifact); ``Gateway.calls`` lists the
   calls too.

4. **After the command.** ``gw.verdict()`` raises ``ProviderRejected`` (HTTP 401/403/404 from
   the upstream: bad input, the run stops, nothing scored) or ``ProviderUnavailable`` (429/5xx or
   unreachable after the gateway's retries: infrastructure, Prefect retries the node from its
   input commit) — whatever the CLI's exit status said. ``gw.limit`` is the reason a limit
   (``max_cost_usd``, ``max_calls``) refused a call, else None: the attempt's status is ``limit``.

5. **The CLI's own usage** (read by a preset from the CLI's JSON output or session files) is handed
   over as ``CliUsage``; ``gw.cross_check(usage)`` returns a ``UsageCheck`` (both totals and
   whether they agree) that the agent keeps in its trajectory; a difference is recorded, the
   gateway's numbers are the account.

Stable from here on: the names above, the environment variables and the port. New optional
fields may be added to ``GatewayConfig``, ``CliUsage`` and ``UsageCheck``.

For presets: a preset is a ``kind="command"`` agent whose options carry ``gateway``;
``CommandAgent`` opens the gateway, adds ``sandbox_env()`` to the command's environment and
``placeholders()`` to its template fields, runs the command behind it and applies the verdict.
A preset needs no ``pass_env`` for a key and no network option (``agent_network`` is gone: an
agent sandbox has the gateway or nothing). HOME in the sandbox is a fresh tmpfs per command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evoci.agents.llm.prices import Price
from evoci.domain import AgentConfig
from evoci.gateway.endpoint import (DUMMY_KEY, GATEWAY_URL, HANDOFF_NAME, SANDBOX_DIR, SANDBOX_PORT, SOCKET_NAME,
                                    GatewayEndpoint, bridge_command, placeholders, sandbox_env)

Upstream = Literal["anthropic", "openai", "openai-compatible"]
PUBLIC_APIS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}


class GatewayConfig(BaseModel):
    """The upstream an agent's gateway forwards to, and the limits of one attempt."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    provider: Upstream = "openai"
    """Whose API the upstream is: 'anthropic', 'openai', or 'openai-compatible' (any server with
    Chat Completions / Responses). Decides the default base_url and key variable."""
    base_url: str | None = None
    """The upstream API root, as an SDK takes it ('https://api.openai.com/v1',
    'https://api.anthropic.com'); None = the provider's public API. A trailing '/v1' is the
    API root's, so '/v1/messages' from the CLI goes to '<root>/v1/messages' either way."""
    api_key_env: str | None = None
    """Environment variable of this process holding the real key; None = ANTHROPIC_API_KEY or
    OPENAI_API_KEY. Read at call time on the host, never recorded, never in the sandbox."""
    api_key_secret: str | None = None
    """Name of a Prefect Secret block holding the key; used instead of ``api_key_env``."""
    max_cost_usd: float | None = Field(None, gt=0)
    """Cost budget of one attempt; the call after it is spent is refused (status 'limit')."""
    max_calls: int | None = Field(200, gt=0)
    """The most upstream calls of one attempt (retries count); then calls are refused ('limit')."""
    max_retries: int = Field(4, ge=0)
    """Retries of one call after 429, 5xx, a timeout or a lost connection, before any byte reached
    the CLI; then the node fails as infrastructure (retried by Prefect, never scored)."""
    retry_backoff_s: float = Field(2.0, ge=0)
    """First wait before a retry without Retry-After; doubles each retry (capped at 60 s)."""
    timeout_s: float = Field(600.0, gt=0)
    """Give up on an upstream response that sends nothing for this many seconds (then retry)."""
    price: Price | None = None
    """USD per 1M tokens; overrides the price table for every model the CLI asks for."""


def needs_gateway(agent: AgentConfig) -> bool:
    """True when the agent reaches a model through the gateway (it has a ``gateway`` option)."""
    return agent.kind != "replay" and bool(agent.options.get("gateway"))


@dataclass(frozen=True)
class CliUsage:
    """Usage as the CLI itself reports it (JSON output, trajectory file, session store)."""

    source: str  # where it was read, e.g. 'claude --output-format json'
    input_tokens: int | None = None  # cached input included, as in agent_calls
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    calls: int | None = None


@dataclass(frozen=True)
class UsageCheck:
    """The gateway's totals beside the CLI's: ``agrees`` when every number the CLI gave matches."""

    gateway: dict[str, Any]
    cli: dict[str, Any]
    differences: dict[str, Any]

    @property
    def agrees(self) -> bool:
        return not self.differences


def open_gateway(config: GatewayConfig, *, on_call=None, transcript=None, model: str | None = None):
    """A started ``Gateway`` (a context manager) for one agent attempt; see the module docstring.

    ``model`` is the model the attempt was configured with: a 404 or a missing price for another
    model the CLI asked for is the agent's failed call, not bad input that stops the run.
    """
    from evoci.gateway.server import Gateway

    return Gateway(config, on_call=on_call, transcript=transcript, model=model).start()


__all__ = [
    "DUMMY_KEY",
    "GATEWAY_URL",
    "HANDOFF_NAME",
    "PUBLIC_APIS",
    "SANDBOX_DIR",
    "SANDBOX_PORT",
    "SOCKET_NAME",
    "CliUsage",
    "GatewayConfig",
    "GatewayEndpoint",
    "UsageCheck",
    "bridge_command",
    "needs_gateway",
    "open_gateway",
    "placeholders",
    "sandbox_env",
]
