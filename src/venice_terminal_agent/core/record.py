"""`Record`: the part of `@dataclass(frozen=True)` our records use, without generating code.

On Python 3.11 a frozen dataclass costs about 0.85 ms to define: `dataclasses` writes the
source of six methods (`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`,
`__delattr__`) and compiles each with `exec` (measured on 200 classes: 0.17 s of 0.29 s in
`exec`). A plain one-shot question defines about 35 of them before its first byte goes out
(issue 21). A `Record` subclass gets the same behaviour from methods written once, here,
that read the field names its class keeps; defining one is a few microseconds.

What it takes from dataclasses (a subset, on purpose): fields are the class's annotations in
order (a record's own after those it inherits; strings under `from __future__ import
annotations`, never evaluated; `ClassVar` skipped), with a default as the class value or
`dataclasses.field(default=..., default_factory=..., repr=..., compare=...)`; `__init__`
takes them positionally or by name and refuses missing or extra ones with Python's own
words; frozen (`dataclasses.FrozenInstanceError`) unless the class says `frozen=False`;
`__eq__` (same class and equal compared fields), `__hash__` to match (none when mutable, as
a dataclass), a dataclass's `__repr__`, `__match_args__`, and `replace(**changes)` in place
of `dataclasses.replace`. Not `__slots__`: instances keep their `__dict__`, as our dataclasses
do (weak references and cached properties keep working). Records are not dataclasses:
`dataclasses.fields`, `asdict` and `replace` refuse them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, ClassVar, Self, dataclass_transform

_NO_DEFAULT = dataclasses.MISSING
_REQUIRED = object()  # in a class's template: no default


class _Factory:
    """In a class's template: the default is made afresh for each instance."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def _key_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The compared fields as a tuple (as a dataclass compares them); `attrgetter` is the
    fastest way, but gives a lone field bare."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        (name,) = names
        return lambda record: (getattr(record, name),)
    return lambda record: ()


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
class Record:
    """Subclass it (`class Call(Record):`; `class Tally(Record, frozen=False):` to mutate)."""

    __match_args__: ClassVar[tuple[str, ...]] = ()
    # Every field in order, with its default, _REQUIRED or a _Factory: a copy begins each instance.
    _record_template: ClassVar[dict[str, Any]] = {}
    _record_unfilled: ClassVar[tuple[str, ...]] = ()  # the fields whose template is no value
    _record_compared: ClassVar[tuple[str, ...]] = ()
    _record_shown: ClassVar[tuple[str, ...]] = ()
    _record_key: ClassVar[Callable[[Any], tuple[Any, ...]]] = staticmethod(_key_getter(()))

    def __init_subclass__(cls, *, frozen: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if frozen and cls.__setattr__ is object.__setattr__:
            raise TypeError(f"{cls.__qualname__}: a frozen record cannot inherit from a mutable one")
        # Class attribute lookup finds the nearest record's: its fields come first.
        template = dict(cls._record_template)
        compared, shown = set(cls._record_compared), set(cls._record_shown)
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            text = annotation if isinstance(annotation, str) else repr(annotation)
            if text.startswith(("ClassVar", "typing.ClassVar")):
                continue
            compared.add(name)
            shown.add(name)
            value = vars(cls).get(name, _REQUIRED)
            if isinstance(value, dataclasses.Field):
                if not value.init or value.kw_only is True or value.hash is not None:
                    raise TypeError(
                        f"{cls.__qualname__}.{name}: a record field takes only default, default_factory, repr and compare"
                    )
                if not value.compare:
                    compared.discard(name)
                if not value.repr:
                    shown.discard(name)
                if value.default_factory is not _NO_DEFAULT:
                    value = _Factory(value.default_factory)
                else:
                    value = _REQUIRED if value.default is _NO_DEFAULT else value.default
                if isinstance(value, _Factory) or value is _REQUIRED:
                    delattr(cls, name)  # no class value, as a dataclass leaves it
                else:
                    setattr(cls, name, value)
            template[name] = value
        fields = tuple(template)
        required = [value is _REQUIRED for value in template.values()]
        if False in required and True in required[required.index(False) :]:
            follows = fields[required.index(True, required.index(False))]
            raise TypeError(f"non-default argument {follows!r} follows default argument")
        cls._record_template = template
        cls._record_unfilled = tuple(
            n for n, v in template.items() if v is _REQUIRED or isinstance(v, _Factory)
        )
        cls.__match_args__ = fields  # type: ignore[misc]  # mypy: set by dataclass_transform
        cls._record_compared = tuple(name for name in fields if name in compared)
        cls._record_shown = tuple(name for name in fields if name in shown)
        cls._record_key = staticmethod(_key_getter(cls._record_compared))
        if not frozen:
            cls.__setattr__ = object.__setattr__  # type: ignore[method-assign, assignment]
            cls.__delattr__ = object.__delattr__  # type: ignore[method-assign]
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared: unhashable, as a dataclass

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = cls.__match_args__
        if len(args) == len(names) and not kwargs:  # every field by position: TextDelta(text)
            self.__dict__.update(zip(names, args, strict=False))
            return
        if len(args) > len(names):
            raise TypeError(_too_many(cls, len(args)))
        values = cls._record_template.copy()  # in field order, whatever order they came in
        values.update(zip(names, args, strict=False))  # no more args than names (checked)
        if kwargs:
            by_position = names[: len(args)]
            if not kwargs.keys() <= values.keys() or not kwargs.keys().isdisjoint(by_position):
                raise TypeError(_wrong_name(cls, kwargs, by_position))
            values.update(kwargs)
        missing = []
        for name in cls._record_unfilled:
            value = values[name]
            if value is _REQUIRED:
                missing.append(name)
            elif isinstance(value, _Factory):
                values[name] = value.make()
        if missing:
            raise TypeError(_missing(cls, missing))
        self.__dict__.update(values)  # past a frozen __setattr__, as a dataclass's __init__ goes

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (`dataclasses.replace` for records)."""
        return type(self)(**{**{name: self.__dict__[name] for name in self.__match_args__}, **changes})

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = type(self)._record_key
        return key(self) == key(other)

    def __hash__(self) -> int:
        return hash(type(self)._record_key(self))

    @recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={self.__dict__[name]!r}" for name in self._record_shown)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _too_many(cls: type[Record], given: int) -> str:
    """Python's words for a call with too many positional arguments (self counted)."""
    most = len(cls.__match_args__) + 1
    least = 1 + sum(value is _REQUIRED for value in cls._record_template.values())
    takes = f"from {least} to {most}" if least != most else str(most)
    return (
        f"{cls.__qualname__}.__init__() takes {takes} positional argument{'s' if most != 1 else ''}"
        f" but {given + 1} were given"
    )


def _wrong_name(cls: type[Record], kwargs: dict[str, Any], by_position: tuple[str, ...]) -> str:
    """Python's words for the first argument given by a name that is not a field's, or by the
    name of one also given by position."""
    for name in kwargs:
        if name not in cls.__match_args__:
            return f"{cls.__qualname__}.__init__() got an unexpected keyword argument {name!r}"
        if name in by_position:
            return f"{cls.__qualname__}.__init__() got multiple values for argument {name!r}"
    raise AssertionError("called for a wrong name")


def _missing(cls: type[Record], missing: list[str]) -> str:
    """Python's words for required arguments left out: 'a', 'b' and 'c'."""
    quoted = [repr(name) for name in missing]
    said = (
        quoted[0]
        if len(quoted) == 1
        else f"{', '.join(quoted[:-1])}{',' if len(quoted) > 2 else ''} and {quoted[-1]}"
    )
    s = "s" if len(missing) > 1 else ""
    return f"{cls.__qualname__}.__init__() missing {len(missing)} required positional argument{s}: {said}"
