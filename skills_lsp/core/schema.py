"""The frontmatter JSON Schema: field docs, per-profile field sets and type checks.

`schema/skill-frontmatter.schema.json` is the one place where field types and docs live; the
validator, hover and completion all read it through this module.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

# jsonschema is imported on first use, here only (about 100 ms): a fully cached re-check never
# validates anything, and its time budget is half a second.

FRONTMATTER_SCHEMA = "skill-frontmatter.schema.json"


def schema_dir() -> Path:
    """Where the schema files are: inside an installed wheel, or the repo's `schema/`."""
    packaged = Path(__file__).resolve().parent.parent / "_schema"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "schema"


@cache
def load_schema(name: str = FRONTMATTER_SCHEMA) -> dict[str, Any]:
    with open(schema_dir() / name, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def _definitions() -> dict[str, Any]:
    defs: dict[str, Any] = load_schema()["$defs"]
    return defs


def profile_names() -> list[str]:
    return [k.removeprefix("profile-") for k in _definitions() if k.startswith("profile-")]


def _profile_schema(profile: str) -> dict[str, Any]:
    try:
        schema: dict[str, Any] = _definitions()[f"profile-{profile}"]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(profile_names())}") from None
    return schema


def profile_description(profile: str) -> str:
    return str(_profile_schema(profile).get("description", ""))


@cache
def profile_fields(profile: str) -> dict[str, str]:
    """Field name -> definition name, in schema order, for one profile."""
    props = _profile_schema(profile)["properties"]
    return {key: sub["$ref"].rsplit("/", 1)[-1] for key, sub in props.items()}


def required_fields(profile: str) -> tuple[str, ...]:
    return tuple(_profile_schema(profile).get("required", ()))


@cache
def all_fields() -> dict[str, str]:
    """Every field any profile knows -> the first profile that defines it."""
    found: dict[str, str] = {}
    for profile in profile_names():
        for key in profile_fields(profile):
            found.setdefault(key, profile)
    return found


def field_schema(profile: str, key: str) -> dict[str, Any] | None:
    definition = profile_fields(profile).get(key)
    if definition is None:
        return None
    schema: dict[str, Any] = _definitions()[definition]
    return schema


def field_doc(profile: str, key: str) -> str | None:
    schema = field_schema(profile, key)
    return None if schema is None else str(schema.get("description", ""))


def max_length(definition: str) -> int:
    """A field's length limit, as the schema states it (one place for limits and docs)."""
    value = _definitions()[definition]["maxLength"]
    assert isinstance(value, int)
    return value


def accepts_string(schema: dict[str, Any]) -> bool:
    """True when a plain YAML scalar should be checked as the text it is written as."""
    if "type" not in schema and "anyOf" not in schema:
        return True
    types = schema.get("type")
    if types == "string" or (isinstance(types, list) and "string" in types):
        return True
    return any(accepts_string(alt) for alt in schema.get("anyOf", ()))


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    root = load_schema()
    registry: Registry = Registry().with_resource(root["$id"], Resource.from_contents(root))
    return registry


@cache
def field_validator(profile: str, key: str) -> Draft202012Validator | None:
    definition = profile_fields(profile).get(key)
    if definition is None:
        return None
    from jsonschema import Draft202012Validator

    ref = {"$ref": f"{load_schema()['$id']}#/$defs/{definition}"}
    return Draft202012Validator(ref, registry=_registry())


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for the whole schema file `name` (a tool manifest, test queries, evals)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(name))
