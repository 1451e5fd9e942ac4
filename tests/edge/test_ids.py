"""Resource IDs: 16 characters of the alphabet, every character equally likely."""

from __future__ import annotations

from collections import Counter

from edge.kernel.ids import ALPHABET, ID_LENGTH, looks_like_id, new_id


def test_ids_are_sixteen_characters_of_the_alphabet_and_distinct() -> None:
    made = [new_id() for _ in range(2000)]
    assert all(len(i) == ID_LENGTH and looks_like_id(i) for i in made)
    assert len(set(made)) == len(made)


def test_every_character_is_drawn_about_equally_often() -> None:
    counts = Counter("".join(new_id() for _ in range(10_000)))
    expected = 10_000 * ID_LENGTH / len(ALPHABET)  # 2580 per character
    assert set(counts) == set(ALPHABET)
    # A modulo bias (every byte folded onto 62 characters) would give the first 8 five
    # chances in 256 and the rest four: +25%. The bound is 6 standard deviations (51 each),
    # so a fair draw does not fail it.
    assert all(abs(n - expected) < 0.12 * expected for n in counts.values())
