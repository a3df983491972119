"""core/record.py: records behave as the frozen dataclasses they replace (issue 21: a dataclass
costs 0.85 ms to define on 3.11, and a plain one-shot defined about 35)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from cli_support import run_probe
from venice_terminal_agent.core.record import Record


def point_class(kind: str) -> Any:
    """The same class twice, a dataclass and a record, with one qualified name for both."""
    if kind == "dataclass":

        @dataclass(frozen=True)
        class Point:
            x: int
            y: int = 0
            tags: list[str] = field(default_factory=list)
            seen: str | None = field(default=None, compare=False, repr=False)

        return Point

    class Point(Record):  # type: ignore[no-redef]
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)
        seen: str | None = field(default=None, compare=False, repr=False)

    return Point


Point = point_class("record")


def test_fields_are_taken_by_position_or_name_with_their_defaults() -> None:
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, [])
    assert Point(1, 2, ["a"]) == Point(tags=["a"], y=2, x=1)
    assert Point(1).tags is not Point(1).tags  # a factory makes each one its own
    assert Point.y == 0 and not hasattr(Point, "tags")  # class values as a dataclass leaves them
    assert Point.__match_args__ == ("x", "y", "tags", "seen")


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),  # x missing
        ((1, 2, [], None, 5), {}),  # one too many
        ((1,), {"x": 2}),  # x twice
        ((1,), {"z": 2}),  # no such field
        ((1,), {"z": 2, "x": 3}),  # the first wrong name is the one named
    ],
    ids=["missing", "too many", "twice", "unknown", "unknown then twice"],
)
def test_a_wrong_call_is_refused_in_the_words_a_dataclass_uses(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    said = []
    for kind in ("dataclass", "record"):
        with pytest.raises(TypeError) as refused:
            point_class(kind)(*args, **kwargs)
        said.append(str(refused.value))
    assert said[0] == said[1]
    assert "point_class.<locals>.Point.__init__()" in said[1]


def test_several_missing_fields_are_named_as_python_names_them() -> None:
    class Three(Record):
        a: int
        b: int
        c: int

    with pytest.raises(
        TypeError, match=r"Three.__init__\(\) missing 3 required positional arguments: 'a', 'b', and 'c'"
    ):
        Three()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"missing 2 required positional arguments: 'b' and 'c'$"):
        Three(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"takes 4 positional arguments but 5 were given$"):
        Three(1, 2, 3, 4)  # type: ignore[call-arg]


def test_a_record_is_frozen_unless_it_says_otherwise() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'x'"):
        del point.x  # type: ignore[misc]
    assert point.x == 1

    class Counter(Record, frozen=False):
        count: int = 0

    counter = Counter()
    counter.count += 1
    assert counter == Counter(1)
    with pytest.raises(TypeError, match="unhashable"):  # mutable and compared, as a dataclass
        hash(counter)


def test_equal_records_are_of_one_class_with_equal_compared_fields() -> None:
    class Other(Record):
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)
        seen: str | None = None

    assert Point(1, seen="a") == Point(1, seen="b")  # `seen` is not compared
    assert Point(1) != Point(2)
    assert Point(1) != Other(1)  # the same fields in another class: not equal
    assert Point(1).__eq__((1, 0, [], None)) is NotImplemented
    with pytest.raises(TypeError, match="unhashable type: 'list'"):  # its fields decide, as in a dataclass
        hash(Point(1))

    hashable = (point_class("dataclass")(1, 2, ()), Point(1, 2, (), seen="a"), Point(1, 2, ()))  # type: ignore[arg-type]
    assert len({hash(point) for point in hashable}) == 1
    assert len({Point(1, 2, ()), Point(1, 2, ()), Point(2, 2, ())}) == 2  # type: ignore[arg-type]


def test_the_repr_is_a_dataclass_repr() -> None:
    args = (1, 2, ["a 'quoted' tag"])
    assert repr(Point(*args)) == repr(point_class("dataclass")(*args))
    assert repr(Point(*args)).endswith("Point(x=1, y=2, tags=[\"a 'quoted' tag\"])")

    class Node(Record, frozen=False):
        children: list[Any] = field(default_factory=list)

    node = Node()
    node.children.append(node)
    assert repr(node).endswith("Node(children=[...])")  # a cycle is cut, as in a dataclass


def test_a_match_statement_takes_a_record_by_position() -> None:
    match Point(1, 2):
        case Point(0, _):
            found = "on the axis"
        case Point(x, y, tags=[]):
            found = f"at {x},{y}"
        case _:
            found = "elsewhere"
    assert found == "at 1,2"


def test_replace_makes_a_changed_copy() -> None:
    point = Point(1, 2, ["a"], seen="s")
    moved = point.replace(y=5)
    assert (moved.x, moved.y, moved.tags, moved.seen) == (1, 5, ["a"], "s")
    assert type(moved) is Point and point.y == 2
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        point.replace(z=1)


def test_fields_are_the_annotations_inherited_first_without_class_variables_or_evaluation() -> None:
    class Base(Record):
        a: int
        kind: ClassVar[str] = "base"

    class Child(Base):
        b: NameNeverDefined  # type: ignore[name-defined]  # noqa: F821  # a string, never evaluated
        c: int = 3

    assert Child.__match_args__ == ("a", "b", "c")
    assert repr(Child(1, 2)).endswith("Child(a=1, b=2, c=3)")
    assert Child.kind == "base"


def test_what_a_record_does_not_do_is_refused_not_ignored() -> None:
    """A dataclass option a record lacks would silently change a class: it stops its definition."""
    with pytest.raises(
        TypeError, match="a record field takes only default, default_factory, repr and compare"
    ):

        class Hidden(Record):
            a: int = field(default=0, init=False)

    class Counter(Record, frozen=False):
        count: int = 0

    with pytest.raises(TypeError, match="a frozen record cannot inherit from a mutable one"):

        class Frozen(Counter):
            pass


def test_a_field_without_a_default_after_one_with_is_refused_as_in_a_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        class Wrong(Record):
            a: int = 0
            b: int


def test_the_loop_cores_records_are_not_dataclasses() -> None:
    """What a plain one-shot defines at start-up: each dataclass there cost 0.85 ms (issue 21)."""
    probe = (
        "import importlib, inspect, json\n"
        "modules = ['events', 'receipt', 'loop', 'context', 'costs']\n"
        "found = {}\n"
        "for name in modules:\n"
        "    module = importlib.import_module('venice_terminal_agent.core.' + name)\n"
        "    found[name] = [k for k, v in vars(module).items() if inspect.isclass(v)\n"
        "                   and v.__module__ == module.__name__ and hasattr(v, '__dataclass_fields__')]\n"
        "print(json.dumps(found))\n"
    )
    found = json.loads(run_probe(probe).stdout)
    assert found == {name: [] for name in ("events", "receipt", "loop", "context", "costs")}
