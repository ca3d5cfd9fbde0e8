"""Write settings back as text that ``parse`` reads to the same dictionary."""


def _text(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and (value != value.strip() or not value):
        return f'"{value}"'
    return str(value)


def dump(settings):
    """``settings`` as ``key = value`` lines; nested dictionaries become ``[sections]`` at the end."""
    lines = [f"{key} = {_text(value)}" for key, value in settings.items() if not isinstance(value, dict)]
    for name, section in settings.items():
        if isinstance(section, dict):
            lines += ["", f"[{name}]"] + [f"{key} = {_text(value)}" for key, value in section.items()]
    return "\n".join(lines) + "\n"
