from strkit import truncate


def test_short_text_unchanged():
    assert truncate("hello", 10) == "hello"


def test_long_text_gets_ellipsis():
    assert truncate("hello world", 8) == "hello..."


def test_breaks_at_word_boundary():
    assert truncate("hello wonderful world", 14) == "hello..."


def test_single_long_word_is_cut():
    assert truncate("supercalifragilistic", 8) == "super..."
