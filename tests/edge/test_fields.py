"""Value rules shared by every resource, and the IDs of access objects."""

from __future__ import annotations

from typing import Any

import pytest

from edge.kernel import fields, ids
from edge.kernel.errors import ValidationError


def refusal(rule: Any, *args: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        rule(*args)
    return caught.value.message


# -- locales ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "normalized"),
    [
        ("zh_hant_tw", "zh-Hant-TW"),
        ("ZH-HANT-TW", "zh-Hant-TW"),
        ("en_us", "en-US"),
        ("en_gb", "en-GB"),
        ("EN", "en"),
        (" fr-ca ", "fr-CA"),
        ("sr_latn", "sr-Latn"),
        ("es_419", "es-419"),
        ("", ""),
        ("_", "_"),
        (5, 5),
        (None, None),
    ],
)
def test_normalize_locale(given: Any, normalized: Any) -> None:
    assert fields.normalize_locale(given) == normalized


@pytest.mark.parametrize("value", ["en_gb", "zh_hant_tw", "de", "pt-br", "es_419", "fil_PH"])
def test_locale_accepts_after_normalizing(value: str) -> None:
    assert fields.locale("locale", value) == fields.normalize_locale(value)


@pytest.mark.parametrize("value", ["english", "e", "", "12-34", "en-US-x-y", "abcd-GB", 5, None])
def test_locale_refuses(value: Any) -> None:
    assert refusal(fields.locale, "default_locale", value) == (
        "default_locale: must be a locale such as en-US"
    )


# -- org names -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "Acme",
        "Acme, Inc.",
        "a_b-c.d 42",
        "Ünïcode Straße",
        "हिन्दी संस्था",  # combining vowel signs are part of the letters
        "Cafe\u0301",  # a decomposed é
        "東京",
        "x" * 128,
    ],
)
def test_org_name_accepts(name: str) -> None:
    assert fields.org_name("name", f"  {name}  ") == name


@pytest.mark.parametrize(
    "name", ["$", "Acme$", "R&D", "a/b", "a@b", "tab\there", "new\nline", "quote'", "emoji 🙂"]
)
def test_org_name_refuses_other_characters(name: str) -> None:
    assert refusal(fields.org_name, "name", name) == (
        "name: may contain only letters, digits, spaces, periods, commas, underscores and hyphens"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "name: must not be empty"),
        ("   ", "name: must not be empty"),
        ("x" * 129, "name: must be at most 128 characters"),
        (5, "name: must be a string"),
        (None, "name: must be a string"),
    ],
)
def test_org_name_needs_text(value: Any, message: str) -> None:
    assert refusal(fields.org_name, "name", value) == message


# -- aliases -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (None, None),
        ("", None),
        ("ab", "ab"),
        (" Acme-Labs ", "acme-labs"),
        ("9lives", "9lives"),
        ("under_score", "under_score"),
        ("x" * 63, "x" * 63),
        ("abcdefgh-1234567", "abcdefgh-1234567"),  # 16 characters, but not an ID's alphabet
        ("abcdefgh123456789", "abcdefgh123456789"),  # 17: longer than an ID
    ],
)
def test_alias_accepts(given: Any, stored: str | None) -> None:
    assert fields.alias("alias", given) == stored


@pytest.mark.parametrize(
    "value", ["a", "-abc", "_abc", "has space", "dot.ted", "ümlaut", "a/b", "x" * 62 + "é"]
)
def test_alias_refuses_bad_shapes(value: str) -> None:
    assert refusal(fields.alias, "alias", value).startswith("alias: must be 2 to 63 lowercase")


@pytest.mark.parametrize(
    "value",
    [
        "abcdEFGH12345678",
        "abcdefgh12345678",
        "ABCDEFGH12345678",
        "0000000000000000",
        "\u212aabcdefgh1234567",  # a Kelvin sign lowers to an ASCII 'k'
    ],
)
def test_alias_refuses_what_looks_like_an_id(value: str) -> None:
    assert refusal(fields.alias, "alias", value) == "alias: must not look like an ID"


def test_new_ids_are_refused_as_aliases() -> None:
    for _ in range(20):
        new = ids.new_id()
        assert refusal(fields.alias, "alias", new).startswith("alias: ")


def test_alias_length_and_type() -> None:
    assert refusal(fields.alias, "alias", "x" * 64) == "alias: must be at most 63 characters"
    assert refusal(fields.alias, "alias", 7) == "alias: must be a string"


# -- tags ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "cleaned"),
    [
        (None, []),
        ([], []),
        ([" a ", "a", "b", "", "  ", "b"], ["a", "b"]),
        (["B", "b"], ["B", "b"]),
        ([f"t{i % 64}" for i in range(200)], [f"t{i}" for i in range(64)]),
        (["x" * 128], ["x" * 128]),
    ],
)
def test_tags_dedupe_and_strip(given: Any, cleaned: list[str]) -> None:
    assert fields.tags("tags", given) == cleaned


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([f"t{i}" for i in range(65)], "tags: must have at most 64 tags"),
        (["x" * 129], "tags: each tag must be at most 128 characters"),
        ("a,b", "tags: must be a list of strings"),
        ([1], "tags: must be a list of strings"),
        (["a", None], "tags: must be a list of strings"),
        ({"a": 1}, "tags: must be a list of strings"),
    ],
)
def test_tags_refuse(value: Any, message: str) -> None:
    assert refusal(fields.tags, "tags", value) == message


# -- numbers, booleans, the rest -----------------------------------------------------------------
@pytest.mark.parametrize(("value", "expected"), [(1, 1), (168, 168), (5.0, 5)])
def test_integer_accepts(value: Any, expected: int) -> None:
    result = fields.integer("hours", value, 1, 168)
    assert result == expected and type(result) is int


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "hours: must be between 1 and 168"),
        (169, "hours: must be between 1 and 168"),
        (168.0 + 1, "hours: must be between 1 and 168"),
        (1.5, "hours: must be a whole number"),
        (True, "hours: must be a whole number"),
        ("5", "hours: must be a whole number"),
        (None, "hours: must be a whole number"),
    ],
)
def test_integer_refuses(value: Any, message: str) -> None:
    assert refusal(fields.integer, "hours", value, 1, 168) == message


def test_boolean_mapping_choices_email_text() -> None:
    assert fields.boolean("b", False) is False
    assert refusal(fields.boolean, "b", 0) == "b: must be true or false"
    assert fields.mapping("m", {"a": 1}) == {"a": 1}
    assert refusal(fields.mapping, "m", []) == "m: must be an object"
    assert fields.choices("c", ["y", "x", "y"], ("x", "y")) == ["y", "x"]
    assert refusal(fields.choices, "c", [], ("x",)).startswith("c: must be a non-empty list")
    assert refusal(fields.choices, "c", ["z"], ("x",)) == "c: 'z' is not one of x"
    assert fields.email("e", " a@b.test ") == "a@b.test"
    for bad in ("nobody", "a@", "@b", "a b@c", "a@b@c"):
        assert refusal(fields.email, "e", bad) == "e: must be an e-mail address", bad
    assert fields.text("d", " x ", required=False) == "x"
    assert fields.text("d", "  ", required=False) == ""


# -- IDs ----------------------------------------------------------------------------------------
def test_new_ids_are_16_url_safe_characters_and_distinct() -> None:
    made = {ids.new_id() for _ in range(500)}
    assert len(made) == 500
    assert all(len(i) == ids.ID_LENGTH == 16 and ids.looks_like_id(i) for i in made)


def test_access_id_is_29_characters_starting_with_the_target() -> None:
    target, grantee = ids.new_id(), ids.new_id()
    access = ids.access_id(target, grantee)
    assert len(access) == ids.ACCESS_ID_LENGTH == 29
    assert access.startswith(target)
    assert all(c in ids.ALPHABET for c in access)


def test_access_id_is_deterministic() -> None:
    target, grantee = ids.new_id(), ids.new_id()
    assert ids.access_id(target, grantee) == ids.access_id(target, grantee)
    assert ids.access_id("T" * 16, "grantee1") == ids.access_id("T" * 16, "grantee1")


def test_access_id_differs_per_grantee_and_per_target() -> None:
    target = ids.new_id()
    tails = {ids.access_id(target, ids.new_id())[16:] for _ in range(500)}
    assert len(tails) == 500
    grantee = ids.new_id()
    assert ids.access_id("A" * 16, grantee) != ids.access_id("B" * 16, grantee)
    assert ids.access_id("A" * 16, "g1") != ids.access_id("A" * 16, "g2")


def test_looks_like_id() -> None:
    assert ids.looks_like_id("abcdEFGH12345678")
    for value in ("abcdEFGH1234567", "abcdEFGH123456789", "abcdEFGH1234567-", "abcdEFGH1234567é"):
        assert not ids.looks_like_id(value), value


def test_description_is_optional_stripped_and_bounded() -> None:
    assert fields.description("description", "  a plant  ") == "a plant"
    assert fields.description("description", "") == ""
    assert fields.description("description", "x" * fields.MAX_DESCRIPTION)
    with pytest.raises(ValidationError) as refused:
        fields.description("description", "x" * (fields.MAX_DESCRIPTION + 1))
    assert refused.value.field == "description"
    with pytest.raises(ValidationError):
        fields.description("description", 7)
