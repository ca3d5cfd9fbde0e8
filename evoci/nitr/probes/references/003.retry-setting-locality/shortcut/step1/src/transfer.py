"""Moving data over an unreliable channel. A channel is a callable that may raise IOError."""

from collections.abc import Callable

from src.config import TransferConfig


def fetch(url: str, channel: Callable[[str, float], bytes], config: TransferConfig, retries: int | None = None) -> bytes:
    attempts = retries or config.max_attempts
    for number in range(1, attempts + 1):
        try:
            return channel(url, config.timeout_s)
        except IOError:
            if number == attempts:
                raise


def upload(url: str, data: bytes, channel: Callable[[str, bytes, float], None], config: TransferConfig,
           retries: int | None = None) -> None:
    attempts = retries or config.max_attempts
    for number in range(1, attempts + 1):
        try:
            return channel(url, data, config.timeout_s)
        except IOError:
            if number == attempts:
                raise
