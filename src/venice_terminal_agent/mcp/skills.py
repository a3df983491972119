"""Skills over MCP (SEP-2640, the `io.modelcontextprotocol/skills` extension): listed at start-up,
fetched only when the model loads one, verified before use.

A server that declares the extension is asked `skills/list` when it starts; each entry carries
the skill's `SKILL.md` URI, its front matter and every file's `digest` ("sha256:<hex>") and
`size`. Nothing is read then (the spec's lazy retrieval: not on connection, not on listing).
Two shared tools reach the skills of every such server, like `read_resource` reaches their
resources: one tool pair rather than one per server, so the model sees every skill in one
description, and the names cannot collide with a server's own tools (they are reserved).

- `load_skill(skill)` reads the skill's `SKILL.md`, checks its byte size and sha256 against the
  entry, parses its YAML front matter and compares it field by field with the entry's. Any
  mismatch: the skill is not loaded and the call is a `ToolError` naming the check that failed.
- `read_skill_file(skill, path)` reads one supporting file of a skill loaded in this session,
  only if the held entry lists it, verified the same way. A skill that was refused, or never
  loaded, has none of its files read.

Both are read-only (a read has no side effects) but have a server: what they send leaves the
machine, so after local data they ask like any MCP tool (core/consent.py, rule 4).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import ToolError
from ..core.record import Record
from ..core.toolbox import ToolSpec
from .frontmatter import FrontmatterError, parse_frontmatter
from .results import error_text

EXTENSION = "io.modelcontextprotocol/skills"
LOAD_SKILL = "load_skill"
READ_SKILL_FILE = "read_skill_file"
TOOLS = (LOAD_SKILL, READ_SKILL_FILE)
SKILL_MD = "SKILL.md"
# The spec's per-skill limits, checkable from the entry before any read; we load up to them.
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
MAX_PAGES = 100
DESCRIPTION_CHARS = 300  # of a skill's description in the tool's description
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class SkillFile(Record):
    uri: str
    digest: str
    size: int


class Skill(Record):
    """One `skills/list` entry of one server: the identity is (server, uri), never the uri alone."""

    server: str
    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[SkillFile, ...] | None  # None: the server says "dynamic" (no digests)
    problem: str | None = None  # why the entry itself cannot be loaded

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name") or self.path.rsplit("/", 1)[-1])

    @property
    def path(self) -> str:
        """`acme/billing/refunds` of `skill://acme/billing/refunds/SKILL.md`."""
        return self.uri.partition("://")[2].removesuffix("/" + SKILL_MD)

    @property
    def root(self) -> str:
        return self.uri.removesuffix(SKILL_MD)


def advertises(client: Any) -> bool:
    """The server declared the skills extension (in `initialize` or `server/discover`)."""
    capabilities = getattr(client, "server_capabilities", None)
    return EXTENSION in (getattr(capabilities, "extensions", None) or {})


async def list_skills(client: Any, server: str) -> list[Skill]:
    """Every entry of the server's `skills/list`, page after page; no file is read."""
    from mcp.types import Request
    from pydantic import TypeAdapter

    answer = TypeAdapter(dict[str, Any])
    skills: list[Skill] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = {"cursor": cursor} if cursor else {}
        page = await client.session.send_request(Request(method="skills/list", params=params), answer)
        for raw in page.get("skills") or []:
            skill = _entry(server, raw)
            if skill is not None:
                skills.append(skill)
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor or cursor in seen:
            return skills
        seen.add(cursor)
    return skills


def _entry(server: str, raw: Any) -> Skill | None:
    """A listed entry as a `Skill` (with `problem` when the spec says not to load it)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
        return None
    uri, frontmatter, resources = raw["uri"], raw.get("frontmatter"), raw.get("resources")
    if not isinstance(frontmatter, dict):
        return Skill(server, uri, {}, (), "its entry has no front matter")
    if not uri.endswith("/" + SKILL_MD):
        return Skill(server, uri, frontmatter, (), f"its URI does not name a {SKILL_MD}")
    if resources == "dynamic":
        return Skill(server, uri, frontmatter, None)
    files: list[SkillFile] = []
    for item in resources if isinstance(resources, list) else [None]:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("uri"), str)
            and isinstance(item.get("digest"), str)
            and DIGEST.fullmatch(item["digest"])
            and isinstance(item.get("size"), int)
            and not isinstance(item.get("size"), bool)
        ):
            return Skill(server, uri, frontmatter, (), "its entry's file list is invalid")
        files.append(SkillFile(item["uri"], item["digest"], item["size"]))
    return Skill(server, uri, frontmatter, tuple(files))


class SkillShelf:
    """The listed skills of the running servers, what was loaded this session, what was refused.

    `sessions` maps a server's name to its `ServerSession` (its `skills` and `client`).
    """

    def __init__(self) -> None:
        self._sessions: dict[str, Any] = {}
        self._by_label: dict[str, Skill] = {}
        self._loaded: set[tuple[str, str]] = set()  # (server, uri) of the held entries
        self._refused: dict[tuple[str, str], str] = {}

    def rebuild(self, sessions: Mapping[str, Any]) -> None:
        self._sessions = dict(sessions)
        skills = [skill for session in sessions.values() for skill in getattr(session, "skills", ())]
        self._by_label = labelled(skills)

    def __bool__(self) -> bool:
        return bool(self._by_label)

    def specs(self) -> list[ToolSpec]:
        if not self._by_label:
            return []
        servers = ", ".join(sorted({skill.server for skill in self._by_label.values()}))
        labels = list(self._by_label)
        listed = "; ".join(
            f"{label} ({skill.server}): {_short(skill.frontmatter.get('description'))}"
            for label, skill in self._by_label.items()
        )
        skill = {"type": "string", "enum": labels, "description": "The skill's name, as listed."}
        load = ToolSpec(
            LOAD_SKILL,
            "Load an MCP server's skill (instructions for a kind of task) when the task needs it: "
            f"its SKILL.md, verified against the server's listing. Skills: {listed}.",
            {"type": "object", "properties": {"skill": skill}, "required": ["skill"]},
            read_only=True,
            server=servers,
        )
        path = {"type": "string", "description": "The file's path in the skill, as load_skill lists it."}
        read = ToolSpec(
            READ_SKILL_FILE,
            "Read one supporting file of a skill loaded with load_skill, verified against the "
            "server's listing.",
            {"type": "object", "properties": {"skill": skill, "path": path}, "required": ["skill", "path"]},
            read_only=True,
            server=servers,
        )
        return [load, read]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        label = arguments.get("skill")
        if not isinstance(label, str) or label not in self._by_label:
            raise ToolError(f"skill must be one of {', '.join(self._by_label)}")
        skill = self._by_label[label]
        if name == LOAD_SKILL:
            return await self._load(label, skill)
        path = arguments.get("path")
        if not isinstance(path, str) or not path:
            raise ToolError("path must be a file's path in the skill, as load_skill lists it")
        return await self._read(label, skill, path)

    async def _load(self, label: str, skill: Skill) -> str:
        key = (skill.server, skill.uri)
        try:
            own = _check_entry(skill)
            text = await self._fetch(skill, own)
            check_frontmatter(text, skill.frontmatter)
        except SkillRefused as refused:
            self._loaded.discard(key)
            self._refused[key] = refused.reason
            raise ToolError(f"skill {label} was not loaded: {refused.reason}") from None
        self._refused.pop(key, None)
        self._loaded.add(key)
        others = [file.uri.removeprefix(skill.root) for file in skill.files or () if file.uri != skill.uri]
        files = f"\n\n[Its files, for read_skill_file: {', '.join(others)}]" if others else ""
        return f"[Skill {label} from {skill.server}, verified]\n\n{text}{files}"

    async def _read(self, label: str, skill: Skill, path: str) -> str:
        key = (skill.server, skill.uri)
        if key in self._refused:
            raise ToolError(f"skill {label} was refused ({self._refused[key]}), so none of its files is read")
        if key not in self._loaded:
            raise ToolError(f"skill {label} is not loaded: load it with {LOAD_SKILL} first")
        uri = skill.root + path.removeprefix("./")
        file = next((f for f in skill.files or () if f.uri == uri), None)
        if file is None or ".." in path.split("/"):
            raise ToolError(f"{path} is not a file of skill {label} (its listing does not name it)")
        try:
            return await self._fetch(skill, file)
        except SkillRefused as refused:
            raise ToolError(f"{path} of skill {label} was not used: {refused.reason}") from None

    async def _fetch(self, skill: Skill, file: SkillFile) -> str:
        """The file's text, read now and verified: size first, then digest."""
        session = self._sessions.get(skill.server)
        client = getattr(session, "client", None)
        if client is None:
            raise ToolError(f"{skill.server} is not running")
        try:
            result = await client.read_resource(file.uri, cache_mode="bypass")
        except Exception as error:
            message = f"{skill.server} could not read {file.uri}: {error_text(error)}"
            raise ToolError(session.masked(message) if session is not None else message) from None
        raw = _raw_bytes(result, file.uri)
        if len(raw) != file.size:
            raise SkillRefused(
                f"size check failed: {file.uri} is {len(raw)} bytes, its listing says {file.size}"
            )
        if "sha256:" + hashlib.sha256(raw).hexdigest() != file.digest:
            raise SkillRefused(f"digest check failed: {file.uri} does not match the sha256 of its listing")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return f"[{file.uri}: {len(raw)} bytes of binary content, verified; not shown]"


class SkillRefused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _check_entry(skill: Skill) -> SkillFile:
    """The entry's own `SKILL.md` file, once the entry is one we load (from it alone, no read)."""
    if skill.problem:
        raise SkillRefused(skill.problem)
    if skill.files is None:  # the spec lets a host decline these; we cannot verify them
        raise SkillRefused('its server publishes no digests for it ("dynamic"), so it cannot be verified')
    if len(skill.files) > MAX_FILES or sum(f.size for f in skill.files) > MAX_BYTES:
        raise SkillRefused(f"it has more than {MAX_FILES} files or 16 MiB, the limits of a skill")
    own = next((f for f in skill.files if f.uri == skill.uri), None)
    if own is None:
        raise SkillRefused(f"its listing gives no digest for its {SKILL_MD}")
    return own


def _raw_bytes(result: Any, uri: str) -> bytes:
    contents = list(getattr(result, "contents", None) or [])
    content = next(
        (c for c in contents if str(getattr(c, "uri", "")) == uri), contents[0] if contents else None
    )
    if content is None:
        raise SkillRefused(f"the server sent no content for {uri}")
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    try:
        return base64.b64decode(getattr(content, "blob", "") or "", validate=True)
    except ValueError:
        raise SkillRefused(f"the server sent unreadable content for {uri}") from None


def labelled(skills: Sequence[Skill]) -> dict[str, Skill]:
    """Each skill under the label the model types: its name, or `server:path` when two share it
    (the spec: names are not unique, and one origin's skill never hides another's)."""
    count: dict[str, int] = {}
    for skill in skills:
        count[skill.name] = count.get(skill.name, 0) + 1
    return {
        skill.name if count[skill.name] == 1 else f"{skill.server}:{skill.path}": skill for skill in skills
    }


def _short(text: Any) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1] + "…"


# -- front matter ---------------------------------------------------------------------------


def check_frontmatter(text: str, listed: Mapping[str, Any]) -> None:
    """The SKILL.md's front matter equals the entry's, field by field; else `SkillRefused`."""
    try:
        found = parse_frontmatter(text)
    except FrontmatterError as error:
        raise SkillRefused(f"front matter check failed: {error}") from None
    for key in sorted(set(found) | set(listed), key=str):
        if not same(found.get(key), listed.get(key)):
            raise SkillRefused(
                f"front matter check failed: {key} is {_shown(found.get(key))} in SKILL.md "
                f"but {_shown(listed.get(key))} in the listing"
            )


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1] + "…"


def same(a: Any, b: Any) -> bool:
    """JSON equality: 1 and 1.0 alike, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return (numbers or type(a) is type(b)) and a == b
