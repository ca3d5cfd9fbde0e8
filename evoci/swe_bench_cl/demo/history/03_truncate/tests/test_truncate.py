from strkit import truncate


def test_short_text_unchanged():
    assert truncate("hello", 10) == "hello"


def test_long_text_gets_ellipsis():
    assert truncate("hello world", 8) == "hello..."
