"""Moving data over an unreliable channel. A channel is a callable that may raise IOError."""

from collections.abc import Callable

from src.config import TransferConfig


def fetch(url: str, channel: Callable[[str, float], bytes], config: TransferConfig) -> bytes:
    return channel(url, config.timeout_s)


def upload(url: str, data: bytes, channel: Callable[[str, bytes, float], None], config: TransferConfig) -> None:
    channel(url, data, config.timeout_s)
