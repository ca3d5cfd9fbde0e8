"""Moving data over an unreliable channel. A channel is a callable that may raise IOError."""

from collections.abc import Callable
from typing import TypeVar

from src.config import TransferConfig

T = TypeVar("T")


def _with_retries(attempt: Callable[[], T], config: TransferConfig) -> T:
    for number in range(1, config.max_attempts + 1):
        try:
            return attempt()
        except IOError:
            if number == config.max_attempts:
                raise
    raise ValueError("max_attempts must be at least 1")


def fetch(url: str, channel: Callable[[str, float], bytes], config: TransferConfig) -> bytes:
    return _with_retries(lambda: channel(url, config.timeout_s), config)


def upload(url: str, data: bytes, channel: Callable[[str, bytes, float], None], config: TransferConfig) -> None:
    _with_retries(lambda: channel(url, data, config.timeout_s), config)
