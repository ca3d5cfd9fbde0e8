"""Process-wide counters of the grading run."""

accepted = 0


def record_accepted() -> None:
    global accepted
    accepted += 1


def reset() -> None:
    global accepted
    accepted = 0
