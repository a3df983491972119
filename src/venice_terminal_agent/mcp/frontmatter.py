"""A skill's YAML front matter (SEP-2640's SKILL.md), read as JSON values to compare with the
listing's entry.

Written here rather than taken from PyYAML, for a reason of behaviour, not taste: PyYAML reads
YAML 1.1, where an unquoted `yes`, `on` or `no` is a boolean and `2026-12-01` a date, so a
skill's honest front matter would differ from the JSON entry its server lists and be refused.
This reads YAML 1.2's core schema for the block YAML that Agent Skills front matter uses
(mappings nested by indentation, `- ` lists, plain and quoted scalars, `|` and `>` blocks,
comments) and refuses the rest (flow collections, anchors, aliases, tags, duplicate keys), so
what it cannot read is never loaded.
"""

from __future__ import annotations

import json
import re
from typing import Any


class FrontmatterError(ValueError):
    pass


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML front matter between the leading `---` lines, as JSON values (see above for
    what is read and what is refused)."""
    text = text.removeprefix("\ufeff")
    match = re.match(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.S)
    if match is None:
        if re.match(r"---[ \t]*\r?\n---[ \t]*(?:\r?\n|$)", text):
            return {}
        raise FrontmatterError("SKILL.md does not begin with a --- delimited front matter block")
    lines = [(number, line.rstrip("\r")) for number, line in enumerate(match.group(1).split("\n"), 2)]
    reader = _Lines(
        [(n, line) for n, line in lines if line.strip() and not line.lstrip().startswith("#")], lines
    )
    value = reader.block(0)
    if reader.position < len(reader.items):
        number, _ = reader.items[reader.position]
        raise FrontmatterError(f"line {number}: unexpected indentation")
    if not isinstance(value, dict):
        raise FrontmatterError("the front matter is not a mapping")
    return value


class _Lines:
    def __init__(self, items: list[tuple[int, str]], raw: list[tuple[int, str]]) -> None:
        self.items, self.raw, self.position = items, raw, 0

    def block(self, indent: int) -> Any:
        number, line = self.items[self.position]
        if _indent(line) != indent:
            raise FrontmatterError(f"line {number}: unexpected indentation")
        if line.lstrip().startswith("- ") or line.strip() == "-":
            return self._sequence(indent)
        return self._mapping(indent)

    def _mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self.position < len(self.items):
            number, line = self.items[self.position]
            if _indent(line) < indent:
                break
            if _indent(line) > indent:
                raise FrontmatterError(f"line {number}: unexpected indentation")
            key, rest = _key(number, line.strip())
            if key in result:
                raise FrontmatterError(f"line {number}: {key} is given twice")
            self.position += 1
            result[key] = self._value(number, rest, indent)
        return result

    def _sequence(self, indent: int) -> list[Any]:
        result: list[Any] = []
        while self.position < len(self.items):
            number, line = self.items[self.position]
            if _indent(line) != indent or not (line.lstrip().startswith("- ") or line.strip() == "-"):
                break
            self.position += 1
            rest = line.strip()[1:].strip()
            if re.match(r"[^\s'\"][^:]*:(\s|$)", rest):
                raise FrontmatterError(f"line {number}: a mapping inside a list item is not supported")
            result.append(self._value(number, rest, indent))
        return result

    def _value(self, number: int, rest: str, indent: int) -> Any:
        if rest[:1] in ("|", ">"):
            return self._block_scalar(number, rest, indent)
        if rest == "" or rest.startswith("#"):
            if self.position < len(self.items) and _indent(self.items[self.position][1]) > indent:
                return self.block(_indent(self.items[self.position][1]))
            if (
                self.position < len(self.items)
                and self.items[self.position][1].lstrip().startswith("- ")
                and (_indent(self.items[self.position][1]) == indent)
            ):
                return self._sequence(indent)
            return None
        value = _scalar(number, rest)
        if isinstance(value, str) and rest[0] not in "'\"":  # a plain scalar may go on below
            more = []
            while self.position < len(self.items) and _indent(self.items[self.position][1]) > indent:
                more.append(self.items[self.position][1].strip())
                self.position += 1
            if more:
                value = " ".join([value, *more])
        return value

    def _block_scalar(self, number: int, header: str, indent: int) -> str:
        match = re.fullmatch(r"([|>])([+-]?)(?:\s+#.*)?", header)
        if match is None:
            raise FrontmatterError(f"line {number}: unsupported block scalar {header!r}")
        style, chomp = match.groups()
        body: list[tuple[int, str]] = []  # raw lines: blank ones and comments-looking ones count
        start = next(i for i, (n, _) in enumerate(self.raw) if n == number) + 1
        for n, line in self.raw[start:]:
            if line.strip() and _indent(line) <= indent:
                break
            body.append((n, line))
        last = body[-1][0] if body else number
        while self.position < len(self.items) and self.items[self.position][0] <= last:
            self.position += 1
        width = min((_indent(line) for _, line in body if line.strip()), default=0)
        lines = [line[width:] if line.strip() else "" for _, line in body]
        trailing = 0
        while lines and not lines[-1]:
            lines.pop()
            trailing += 1
        if style == "|":
            text = "\n".join(lines)
        else:  # folded: lines of a paragraph joined by a space, an empty line a line break
            text, blank = "", False
            for i, line in enumerate(lines):
                if i == 0 or not line:
                    text, blank = (line, False) if i == 0 else (text + "\n", True)
                else:
                    text, blank = text + ("" if blank else " ") + line, False
        if not lines or chomp == "-":
            return text
        return text + "\n" * (trailing + 1 if chomp == "+" else 1)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key(number: int, line: str) -> tuple[str, str]:
    if line[:1] in ("'", '"'):
        quoted = re.match(r"('(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\")\s*:(?:\s+(.*)|$)", line)
        if quoted is None:
            raise FrontmatterError(f"line {number}: cannot read this key")
        return str(_scalar(number, quoted.group(1))), (quoted.group(2) or "").strip()
    match = re.match(r"([^\s:#][^:#]*?)\s*:(?:\s+(.*)|$)", line)
    if match is None:
        raise FrontmatterError(f"line {number}: expected `key: value`")
    return match.group(1), (match.group(2) or "").strip()


INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _scalar(number: int, text: str) -> Any:
    """One scalar by YAML 1.2's core schema; anything fancier is refused."""
    if text.startswith("'"):
        match = re.fullmatch(r"'((?:[^']|'')*)'(?:\s+#.*)?", text)
        if match is None:
            raise FrontmatterError(f"line {number}: unterminated quoted string")
        return match.group(1).replace("''", "'")
    if text.startswith('"'):
        match = re.fullmatch(r"(\"(?:[^\"\\]|\\.)*\")(?:\s+#.*)?", text)
        if match is None:
            raise FrontmatterError(f"line {number}: unterminated quoted string")
        try:
            return json.loads(match.group(1))
        except ValueError:
            raise FrontmatterError(f"line {number}: an escape this reader does not know") from None
    if text[0] in "[]{}&*!%@`":
        raise FrontmatterError(
            f"line {number}: flow collections, anchors, aliases and tags are not supported"
        )
    text = re.sub(r"\s+#.*$", "", text).strip()
    if text in ("null", "Null", "NULL", "~", ""):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if INT.fullmatch(text):
        return int(text)
    if FLOAT.fullmatch(text) and any(c.isdigit() for c in text):
        return float(text)
    if text in (".inf", "+.inf", ".Inf", "-.inf", ".nan", ".NaN"):
        raise FrontmatterError(f"line {number}: {text} has no JSON form")
    return text
