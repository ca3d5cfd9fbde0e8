"""The architect's output: ``.evoci/requirement.xml``, its shape and its validation.

SWE-CI asks the architect for 1 to 5 requirements, each with a location, a description,
a contract and acceptance criteria. evoci fixes the XML shape so it can be checked::

    <requirements>
      <requirement>
        <location>src/pkg/module.py: class Parser, method parse</location>
        <description>What is wrong now.</description>
        <contract>The behaviour wanted.</contract>
        <acceptance>How to tell it works.</acceptance>
      </requirement>
      ...
    </requirements>

Every architect (model-driven, command-line or replayed) is judged by
``validate_requirement``; an empty list of errors means the document is accepted.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from xml.sax.saxutils import escape

ROOT = "requirements"
ITEM = "requirement"
FIELDS = ("location", "description", "contract", "acceptance")
MIN_ITEMS, MAX_ITEMS = 1, 5


@dataclass(frozen=True)
class Requirement:
    """One change requirement, as the programmer reads it."""

    location: str
    description: str
    contract: str
    acceptance: str


def validate_requirement(xml_text: str) -> list[str]:
    """Every reason ``xml_text`` is not an acceptable requirement document (none: accepted)."""
    if not xml_text.strip():
        return ["requirement.xml is empty"]
    try:
        root = ET.fromstring(xml_text.strip())
    except ET.ParseError as exc:
        return [f"requirement.xml is not well-formed XML: {exc}"]
    if root.tag != ROOT:
        return [f"the root element must be <{ROOT}>, not <{root.tag}>"]
    errors = [f"unexpected element <{child.tag}> under <{ROOT}>" for child in root if child.tag != ITEM]
    items = [child for child in root if child.tag == ITEM]
    if not MIN_ITEMS <= len(items) <= MAX_ITEMS:
        errors.append(f"<{ROOT}> must hold {MIN_ITEMS} to {MAX_ITEMS} <{ITEM}> elements, not {len(items)}")
    for number, item in enumerate(items, start=1):
        for name in FIELDS:
            found = item.findall(name)
            if not found:
                errors.append(f"<{ITEM}> #{number} has no <{name}>")
            elif len(found) > 1:
                errors.append(f"<{ITEM}> #{number} has {len(found)} <{name}> elements; give exactly one")
            elif not _text(found[0]):
                errors.append(f"<{ITEM}> #{number} has an empty <{name}>")
    return errors


def parse_requirements(xml_text: str) -> list[Requirement]:
    """The requirements of a document that ``validate_requirement`` accepted."""
    root = ET.fromstring(xml_text.strip())
    return [Requirement(**{name: _text(item.find(name)) for name in FIELDS}) for item in root.iter(ITEM)]


def render_requirements(items: Iterable[Requirement | Mapping[str, str]]) -> str:
    """The XML document for ``items`` (in the shape ``validate_requirement`` accepts)."""
    lines = [f"<{ROOT}>"]
    for item in items:
        fields = item if isinstance(item, Mapping) else vars(item)
        lines.append(f"  <{ITEM}>")
        lines += [f"    <{name}>{escape(fields[name])}</{name}>" for name in FIELDS]
        lines.append(f"  </{ITEM}>")
    lines.append(f"</{ROOT}>")
    return "\n".join(lines) + "\n"


def _text(element: ET.Element | None) -> str:
    return "".join(element.itertext()).strip() if element is not None else ""


__all__ = [
    "FIELDS",
    "MAX_ITEMS",
    "MIN_ITEMS",
    "Requirement",
    "parse_requirements",
    "render_requirements",
    "validate_requirement",
]
