from strkit import slugify


def test_lowercase():
    assert slugify("Hello") == "hello"


def test_default_separator_is_underscore():
    assert slugify("hello world") == "hello_world"


def test_punctuation_removed():
    assert slugify("Hello, World!") == "hello_world"


def test_repeated_separators_collapse():
    assert slugify("  a -- b  ") == "a_b"


def test_custom_separator():
    assert slugify("Hello big World", separator="-") == "hello-big-world"
