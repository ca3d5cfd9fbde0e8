def slugify(text):
    """A URL slug: lower case, spaces become dashes."""
    return text.lower().replace(" ", "-")
