"""source_analysis's rule language, every form, with expected results worked out by hand.

The text below has four lines; each case states which line the rule reports (its earliest
hit), or that it does not match (None), following the public evaluator's precedence:
all_of, then any_of, then not (which only vetoes), then the first of the substring /
pattern keys, then the hit thresholds; a rule with none of these matches with no line.
"""

from __future__ import annotations

import pytest

from evoci.nitr import rules

TEXT = "#include <vector>\nclass Cache {\n  void Evict();  // TODO\n};\n"
NO = rules.NO_MATCH


@pytest.mark.parametrize("rule, hit", [
    ({"any_substrings": ["Evict", "vector"]}, 1),              # earliest of the needles found: line 1
    ({"any_substrings": ["Flush"]}, NO),
    ({"all_substrings": ["Evict", "class"]}, 2),               # both present; earliest is 'class' on line 2
    ({"all_substrings": ["Evict", "Flush"]}, NO),
    ({"any_patterns": [r"^\s*void\s+\w+\(", r"^};"]}, 3),     # multi-line mode: ^ at each line
    ({"all_patterns": [r"Evict", r"^#include"]}, 1),
    ({"all_patterns": [r"Evict", r"Flush"]}, NO),
    ({"not": {"any_substrings": ["Flush"]}}, None),            # vetoes nothing, nothing else: matches, no line
    ({"not": {"any_substrings": ["Evict"]}}, NO),
    ({"not": {"any_substrings": ["Flush"]}, "any_patterns": ["TODO"]}, 3),  # not X, and P
    ({"not": {"any_substrings": ["TODO"]}, "any_patterns": ["Evict"]}, NO),
    ({"all_of": [{"any_substrings": ["Evict"]}, {"any_substrings": ["class"]}]}, 2),
    ({"all_of": [{"any_substrings": ["Evict"]}, {"any_substrings": ["Flush"]}]}, NO),
    ({"all_of": [{"any_substrings": ["Evict"]}], "not": {"any_substrings": ["Evict"]}}, 3),  # all_of decides alone
    ({"any_of": [{"any_substrings": ["Flush"]}, {"any_patterns": ["};"]}]}, 4),
    ({"any_of": [{"any_substrings": ["Flush"]}]}, NO),
    ({"any_substrings": ["Evict"], "all_patterns": ["Flush"]}, 3),  # the first list key decides alone
    ({"substring_hit_thresholds": [{"needles": ["Evict", "class", "Flush"], "at_least": 2}]}, None),
    ({"substring_hit_thresholds": [{"needles": ["Evict", "Flush"], "at_least": 2}]}, NO),
    ({"pattern_hit_thresholds": [{"patterns": ["cache", "EVICT"], "at_least": 2, "flags": ["IGNORECASE"]}]}, None),
    ({"pattern_hit_thresholds": [{"patterns": ["cache", "EVICT"], "at_least": 1}]}, NO),  # case-sensitive by default
    ({"pattern_hit_thresholds": [{"patterns": ["^void"], "at_least": 1}]}, NO),  # no multi-line mode here
    ({"pattern_hit_thresholds": [{"patterns": ["^  void"], "at_least": 1, "flags": ["MULTILINE"]}]}, None),
    ({"any_substrings": []}, None),                             # an empty list is no condition
    ({"id": "bare"}, None),
])
def test_every_rule_form(rule, hit):
    rules.check_rule(rule, "rules[0]")
    assert rules.match(rule, TEXT) == hit


def test_messages_get_every_field_the_evaluator_fills_and_a_bad_template_still_fails_the_module():
    rule = {"id": "r1", "message": "{rule_id} {relative_path} {line_no} {location} {filename} {path}"}
    assert rules.file_message(rule, "src/a.cc", "src/a.cc", "a.cc", 3) == "r1 src/a.cc 3 src/a.cc:3 a.cc src/a.cc"
    assert rules.file_message({"id": "r1", "message": "{location}"}, "x", "src/a.cc", "a.cc", None) == "src/a.cc"
    assert rules.file_message({"id": "r"}, "src/a.cc", "src/a.cc", "a.cc", 1) == "Source analysis rule 'r' matched in src/a.cc"
    # the public suite has a message naming "{h,cc}": the rule matched, so the finding stays, text as written
    assert rules.file_message({"id": "r", "message": "x.{h,cc} bad"}, "a", "src/x.h", "x.h", 2) == "x.{h,cc} bad [src/x.h:2]"
    glob = {"id": "g", "message": "{rule_id}: {matching_file_count} ({matching_files})"}
    assert rules.global_message(glob, ["a.cc", "b.cc"]) == "g: 2 (a.cc, b.cc)"


@pytest.mark.parametrize("rule, problem", [
    ({"any_pattern": ["x"]}, "unknown key 'any_pattern'"),
    ({"any_patterns": ["("]}, "is not a regular expression"),
    ({"any_substrings": "x"}, "must be a list of strings"),
    ({"not": ["x"]}, r"rules\[0\]\.not must be an object"),
    ({"all_of": [{"min_matching_files": 1}]}, "unknown key 'min_matching_files'"),  # only global rules count files
    ({"pattern_hit_thresholds": [{"patterns": ["x"], "flags": ["compile"]}]}, "is not a regex flag"),
])
def test_rules_evoci_cannot_evaluate_are_refused_by_name(rule, problem):
    with pytest.raises(ValueError, match=problem):
        rules.check_rule(rule, "rules[0]")
