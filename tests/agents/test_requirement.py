"""requirement.xml: the shape every architect's output is checked against."""

from __future__ import annotations

import pytest

from evoci.agents.requirement import Requirement, parse_requirements, render_requirements, validate_requirement

ONE = Requirement("src/calc.py: add()", "add subtracts.", "add(a, b) returns a + b.", "add(2, 3) == 5")


def test_a_rendered_document_is_valid_and_parses_back() -> None:
    xml = render_requirements([ONE, {"location": "a & b", "description": "x < y", "contract": "c", "acceptance": "d"}])
    assert validate_requirement(xml) == []
    assert parse_requirements(xml)[0] == ONE
    assert parse_requirements(xml)[1].location == "a & b"


@pytest.mark.parametrize(
    ("xml", "error"),
    [
        ("", "empty"),
        ("<requirements><requirement>", "not well-formed"),
        ("<reqs/>", "root element must be <requirements>"),
        ("<requirements/>", "1 to 5"),
        (render_requirements([ONE] * 6), "not 6"),
        ("<requirements><requirement><location>x</location></requirement></requirements>", "has no <description>"),
        (render_requirements([ONE]).replace("add subtracts.", "  "), "empty <description>"),
        (render_requirements([ONE]).replace("</requirements>", "<note>hi</note></requirements>"), "unexpected element <note>"),
    ],
)
def test_invalid_documents_say_what_is_wrong(xml: str, error: str) -> None:
    errors = validate_requirement(xml)
    assert errors and any(error in e for e in errors), errors
