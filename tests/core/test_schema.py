"""schema/*.json: valid JSON Schema 2020-12, every field documented, profiles consistent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from skills_lsp.core import schema
from skills_lsp.core.rules.profiles import PROFILES

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"


@pytest.mark.parametrize(
    "name", ["skill-frontmatter.schema.json", "evals.schema.json", "eval-queries.schema.json"]
)
def test_schema_files_are_valid_2020_12(name: str) -> None:
    data = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(data)


def test_every_profile_is_in_the_schema_and_back() -> None:
    assert set(schema.profile_names()) == set(PROFILES)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_field_of_every_profile_has_a_description(profile: str) -> None:
    fields = schema.profile_fields(profile)
    assert {"name", "description"} <= set(fields)
    for key in fields:
        doc = schema.field_doc(profile, key)
        assert doc and len(doc) > 20, f"{profile}.{key} needs a human description"


def test_root_schema_validates_a_spec_skill_for_yaml_language_server_users() -> None:
    validator = Draft202012Validator(schema.load_schema())
    good = {"name": "pdf-tools", "description": "Extract PDF text. Use when asked.", "allowed-tools": "Read"}
    assert list(validator.iter_errors(good)) == []
    bad = {"name": "PDF_Tools", "description": "", "licence": "MIT"}
    problems = {e.validator for e in validator.iter_errors(bad)}
    assert {"pattern", "minLength", "additionalProperties"} <= problems


def test_field_types_per_profile() -> None:
    assert schema.field_validator("agentskills", "trigger") is None  # not an agentskills field
    trigger = schema.field_validator("adk-rust", "trigger")
    assert trigger is not None and not trigger.is_valid("yes") and trigger.is_valid(True)
    tools = schema.field_validator("adk-rust", "allowed-tools")
    assert tools is not None and tools.is_valid(["a"]) and not tools.is_valid("a b")
    adk_meta = schema.field_validator("adk", "metadata")
    assert adk_meta is not None and not adk_meta.is_valid({"adk_inject_state": "yes"})
    assert adk_meta.is_valid({"adk_additional_tools": ["x"], "adk_inject_state": True})


def test_the_query_schema_states_every_scorers_default_min_score() -> None:
    from skills_lsp.core.routing.scorer import DEFAULT_MIN_SCORE

    text = json.dumps(json.loads((SCHEMA_DIR / "skill-queries.schema.json").read_text(encoding="utf-8")))
    for scorer, minimum in DEFAULT_MIN_SCORE.items():
        assert f"{minimum:g} {scorer}" in text or f"{minimum} for {scorer}" in text, scorer


def test_the_trigger_evals_schema_takes_the_examples_file_and_refuses_a_bad_entry() -> None:
    validator = Draft202012Validator(json.loads((SCHEMA_DIR / "eval-queries.schema.json").read_text()))
    examples = SCHEMA_DIR.parent / "examples" / "skills" / "csv-data-cleaning" / "evals" / "eval_queries.json"
    assert list(validator.iter_errors(json.loads(examples.read_text(encoding="utf-8")))) == []
    assert list(validator.iter_errors([{"query": "x", "should_trigger": "yes"}]))
