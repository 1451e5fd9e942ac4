"""Repeatable benchmarks (`make bench`): they print figures; nothing here asserts time."""
