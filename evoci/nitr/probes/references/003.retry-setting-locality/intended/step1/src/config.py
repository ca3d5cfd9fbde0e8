"""Settings shared by every transfer."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TransferConfig:
    timeout_s: float = 10.0
    max_attempts: int = 3
