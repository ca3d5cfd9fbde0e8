"""evoci: measure how well coding agents maintain software over long horizons."""

__version__ = "0.1.0"
