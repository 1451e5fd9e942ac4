"""The house as drawn: every import of every module of `edge/`, `edge_agent/`, `api/`,
`storage/` and `embedded_broker/` (read with `ast`, so imports inside functions and under
TYPE_CHECKING count) obeys the table of docs/architecture.md, "Who may import whom". The
rules live in that table alone, so the doc and the test cannot drift."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
PACKAGES = ("edge", "edge_agent", "api", "storage", "embedded_broker")
SECTION = "## Who may import whom"
_NAME = re.compile(r"`([\w.]+)`")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    line: int
    target: str  # what it imports, dotted (a module, or a name in one)


@dataclass(frozen=True)
class Rules:
    rooms: dict[str, frozenset[str]]  # room -> the rooms it may import
    exceptions: dict[str, frozenset[str]]  # module or package -> what it may also import


def _tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of the section, each a list of rows of cells, header dropped."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*section.splitlines(), ""]:
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            tables.append([row for row in current[2:]])
            current = []
    return tables


def parse_rules(text: str) -> Rules:
    """The room table (Room | May import | Why) and the exceptions (Module | May also
    import | Why) of the section."""
    rooms_table, exceptions_table = _tables(text)[:2]
    rooms = {_NAME.findall(r[0])[0]: frozenset(_NAME.findall(r[1])) for r in rooms_table}
    exceptions = {_NAME.findall(r[0])[0]: frozenset(_NAME.findall(r[1])) for r in exceptions_table}
    return Rules(rooms, exceptions)


def room_of(name: str, rooms: dict[str, frozenset[str]]) -> str | None:
    """The room of a dotted module (or of a name imported from one): the longest room that
    is the name or a package above it. The `edge` package itself and the names it holds
    (its version numbers) are `edge.kernel`'s (every package and every module at the top
    of `edge/` is a room of its own: see the tests below)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in rooms:
            return candidate
    if parts[0] == "edge":
        return "edge.kernel"
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_of(path: Path, root: Path) -> list[Import]:
    """Every import of one module, wherever it stands in the file; `from x import y` is
    `x.y` (y may be a module, as in `from edge import app`)."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [Import(module, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*above, *([node.module] if node.module else [])])
            found += [Import(module, node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def all_imports(root: Path = REPO) -> list[Import]:
    """The imports of the project's own modules by the project's modules (not the tests)."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found += [i for i in _imports_of(path, root) if i.target.split(".")[0] in PACKAGES]
    return found


def _excepted(item: Import, rules: Rules) -> bool:
    for holder, allowed in rules.exceptions.items():
        if item.module == holder or item.module.startswith(holder + "."):
            if any(item.target == a or item.target.startswith(a + ".") for a in allowed):
                return True
    return False


def broken(imports: list[Import], rules: Rules) -> list[str]:
    """Each import the table does not allow, as `module:line imports target (room -> room)`."""
    out = []
    for item in imports:
        source, target = room_of(item.module, rules.rooms), room_of(item.target, rules.rooms)
        if source is None:
            out.append(f"{item.module} is in no room of docs/architecture.md")
        elif target is None:
            out.append(f"{item.module}:{item.line} imports {item.target}, in no room")
        elif source != target and target not in rules.rooms[source]:
            if not _excepted(item, rules):
                out.append(
                    f"{item.module}:{item.line} imports {item.target} ({source} -> {target})"
                )
    return out


def _cycle(rooms: dict[str, frozenset[str]]) -> list[str]:
    """A cycle in the table, as the rooms on it, or nothing: downhill means no way back."""
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(room: str, path: list[str]) -> list[str]:
        state[room] = 1
        for lower in sorted(rooms.get(room, frozenset())):
            if state.get(lower) == 1:
                return [*path, room, lower]
            if lower not in state and (found := visit(lower, [*path, room])):
                return found
        state[room] = 2
        return []

    for room in sorted(rooms):
        if room not in state and (found := visit(room, [])):
            return found
    return []


RULES = parse_rules(DOC.read_text("utf-8"))


def test_every_import_runs_downhill_as_the_table_says() -> None:
    assert broken(all_imports(), RULES) == []


def test_the_table_has_no_cycle_and_names_only_its_rooms() -> None:
    assert _cycle(dict(RULES.rooms)) == []
    named = set().union(*RULES.rooms.values())
    assert named <= set(RULES.rooms), named - set(RULES.rooms)


def test_every_package_of_edge_is_a_room() -> None:
    packages = {f"edge.{p.parent.name}" for p in (REPO / "edge").glob("*/__init__.py")}
    assert packages - set(RULES.rooms) == set()


def test_the_top_of_edge_holds_only_the_composition_root() -> None:
    """What every room shares lives in `edge/kernel/`; a new module at the top of `edge/`
    must be a room of the table (the composition root), not a kernel module by default."""
    modules = {f"edge.{p.stem}" for p in (REPO / "edge").glob("*.py") if p.stem != "__init__"}
    assert modules - set(RULES.rooms) == set()


def test_every_exception_is_still_used() -> None:
    """An exception nobody needs any more is a door left open: the table must lose it."""
    imports = all_imports()
    for holder, allowed in RULES.exceptions.items():
        for target in allowed:
            assert any(
                (i.module == holder or i.module.startswith(holder + "."))
                and (i.target == target or i.target.startswith(target + "."))
                for i in imports
            ), f"{holder} -> {target} is excepted but never imported"


@pytest.mark.parametrize(
    ("module", "source", "wrong"),
    [
        ("edge/tenancy/extra.py", "from edge.accounts.user_kind import new_user\n", "accounts"),
        ("edge/access/extra.py", "def f():\n    from edge.services import Services\n", "services"),
        (
            "edge/delivery/extra.py",
            "import typing\nif typing.TYPE_CHECKING:\n    from edge.tenancy import orgs\n",
            "tenancy",
        ),
        ("api/extra.py", "from storage import users\n", "storage"),
        ("storage/extra.py", "from ..edge import clock\n", "edge"),
        ("embedded_broker/extra.py", "import storage.users\n", "storage"),
    ],
)
def test_a_wrong_import_is_caught(tmp_path: Path, module: str, source: str, wrong: str) -> None:
    """The check itself: a module that imports uphill, in a function, under TYPE_CHECKING or
    relatively, is reported (the broker's exception covers storage.mqtt_sessions only)."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for folder in ("edge/tenancy", "edge/access", "edge/delivery"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / module).write_text(source)
    found = broken(all_imports(tmp_path), RULES)
    assert len(found) == 1 and wrong in found[0], found


def test_the_broker_may_import_its_session_record_only() -> None:
    allowed = Import("embedded_broker.sessions", 1, "storage.mqtt_sessions.StoredSession")
    refused = Import("embedded_broker.sessions", 1, "storage.users.get")
    assert broken([allowed], RULES) == []
    assert len(broken([refused], RULES)) == 1
