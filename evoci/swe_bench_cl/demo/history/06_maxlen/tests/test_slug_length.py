from strkit import slugify


def test_max_length_cuts_at_separator():
    assert slugify("Hello big World", max_length=9) == "hello_big"


def test_max_length_cuts_a_long_word():
    assert slugify("Supercalifragilistic", max_length=5) == "super"


def test_short_slug_is_kept():
    assert slugify("Hi there", max_length=20) == "hi_there"
