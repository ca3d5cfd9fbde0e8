"""What a sandbox and the command in it see of the model gateway: the port, the folder, the
environment. Kept free of evoci imports, so the sandboxes can use it without an import cycle."""

from __future__ import annotations

from dataclasses import dataclass

SANDBOX_PORT = 4780
"""The gateway's port on 127.0.0.1 inside every agent sandbox (its own network namespace)."""
SANDBOX_DIR = "/evoci-gateway"
"""Where the folder holding the gateway's socket (and the bridge) is mounted in the sandbox."""
SOCKET_NAME = "gateway.sock"
HANDOFF_NAME = "handoff.sock"
"""Beside SOCKET_NAME: where the bridge passes the CLI's accepted connections to the gateway."""
DUMMY_KEY = "evoci-gateway-dummy-key"
"""What the command holds as its API key; the gateway replaces it with the real one."""
GATEWAY_URL = f"http://127.0.0.1:{SANDBOX_PORT}"


@dataclass(frozen=True)
class GatewayEndpoint:
    """What a sandbox needs to serve the gateway into a command: the host folder holding the socket."""

    host_dir: str  # host folder with SOCKET_NAME (bound at SANDBOX_DIR)


def sandbox_env() -> dict[str, str]:
    """The environment variables a command behind the gateway gets (no secret among them)."""
    return {
        "EVOCI_GATEWAY_URL": GATEWAY_URL,
        "ANTHROPIC_BASE_URL": GATEWAY_URL,
        "OPENAI_BASE_URL": f"{GATEWAY_URL}/v1",
        "OPENAI_API_BASE": f"{GATEWAY_URL}/v1",  # litellm's older name (mini-swe-agent, aider)
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "ANTHROPIC_AUTH_TOKEN": DUMMY_KEY,
        "OPENAI_API_KEY": DUMMY_KEY,
    }


def bridge_command() -> str:
    """The shell words that start the bridge in a sandbox; they return once the port listens."""
    return f"python3 -I -S {SANDBOX_DIR}/bridge.py {SANDBOX_DIR}/{SOCKET_NAME} {SANDBOX_PORT}"


def placeholders() -> dict[str, str]:
    """Command-template placeholders for the gateway: {gateway_url}, {openai_base_url}, {dummy_key}."""
    return {"gateway_url": GATEWAY_URL, "openai_base_url": f"{GATEWAY_URL}/v1", "dummy_key": DUMMY_KEY}


__all__ = ["DUMMY_KEY", "GATEWAY_URL", "HANDOFF_NAME", "SANDBOX_DIR", "SANDBOX_PORT", "SOCKET_NAME", "GatewayEndpoint",
           "bridge_command", "placeholders", "sandbox_env"]
