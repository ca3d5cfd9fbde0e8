from strkit import slugify


def test_lowercase():
    assert slugify("Hello") == "hello"


def test_spaces_become_dashes():
    assert slugify("hello world") == "hello-world"


def test_punctuation_removed():
    assert slugify("Hello, World!") == "hello-world"
