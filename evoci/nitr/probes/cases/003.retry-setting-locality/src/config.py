"""Settings shared by every transfer."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TransferConfig:
    timeout_s: float = 10.0
