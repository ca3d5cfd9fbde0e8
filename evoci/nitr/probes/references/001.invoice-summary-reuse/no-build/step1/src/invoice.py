"""Invoices: a customer and the lines they are billed for."""

from dataclasses import dataclass, field

from src.money import format_cents


@dataclass
class Line:
    description: str
    cents: int


@dataclass
class Invoice:
    customer: str
    lines: list[Line] = field(default_factory=list)

    def add(self, description: str, cents: int) -> None:
        self.lines.append(Line(description, cents))

    def total_cents(self) -> int:
        return sum(line.cents for line in self.lines)

    def summary(self) -> str
        rows = [f"{line.description}: {format_cents(line.cents)}" for line in self.lines]
        return "\n".join(rows + [f"Total: {format_cents(self.total_cents())}"])
