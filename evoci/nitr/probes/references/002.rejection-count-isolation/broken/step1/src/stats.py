"""Process-wide counters of the grading run."""

accepted = 0
rejected = 0


def record_accepted() -> None:
    global accepted
    accepted += 1


def record_rejected() -> None:
    global rejected
    rejected += 1


def reset() -> None:
    global accepted, rejected
    accepted = 0
    rejected = 0
