"""Money amounts are kept in integer cents."""


def format_cents(cents: int) -> str:
    """Format an amount of cents for people: 123456 -> "$1,234.56", -250 -> "-$2.50"."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"
