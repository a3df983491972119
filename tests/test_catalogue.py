"""One catalogue over several servers: valid unique names, mapped back to the right tool."""

import re
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from venice_terminal_agent.mcp.catalogue import MAX_NAME, Catalogue, Listing, Target

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tool(name, hint=None, schema=None, description="d"):
    annotations = SimpleNamespace(read_only_hint=hint) if hint is not None else None
    return SimpleNamespace(
        name=name,
        description=description,
        title=None,
        input_schema=schema or {"type": "object"},
        annotations=annotations,
    )


def test_plain_names_stay_and_map_back():
    cat = Catalogue.build([Listing("time", [tool("get_current_time"), tool("convert_time")])])
    assert [s.name for s in cat.specs] == ["get_current_time", "convert_time"]
    assert cat.targets["convert_time"] == Target("time", "convert_time")
    assert all(s.server == "time" for s in cat.specs)


def test_invalid_characters_become_underscores():
    cat = Catalogue.build([Listing("s", [tool("files.read"), tool("naïve tool/1")])])
    names = [s.name for s in cat.specs]
    assert names == ["files_read", "na_ve_tool_1"]
    assert cat.targets["files_read"].tool == "files.read"


def test_a_name_two_servers_share_gets_their_prefix():
    cat = Catalogue.build(
        [
            Listing("web", [tool("search")]),
            Listing("my docs", [tool("search")]),
            Listing("x", [tool("other")]),
        ]
    )
    assert [s.name for s in cat.specs] == ["web__search", "my_docs__search", "other"]
    assert cat.targets["my_docs__search"] == Target("my docs", "search")


def test_a_built_in_tool_s_name_gets_the_server_prefix():
    cat = Catalogue.build(
        [Listing("files", [tool("read_file"), tool("stat")])], reserved={"read_file", "page"}
    )
    assert [s.name for s in cat.specs] == ["files__read_file", "stat"]
    assert cat.targets["files__read_file"] == Target("files", "read_file")


def test_long_names_are_cut_with_a_hash_and_never_collide():
    a, b = "x" * 70 + "_alpha", "x" * 70 + "_beta"
    cat = Catalogue.build([Listing("s", [tool(a), tool(b)])])
    names = [s.name for s in cat.specs]
    assert all(len(n) == MAX_NAME and VALID.match(n) for n in names)
    assert names[0] != names[1]
    assert cat.targets[names[0]].tool == a and cat.targets[names[1]].tool == b
    # Stable: the same tool gets the same name every time.
    assert [s.name for s in Catalogue.build([Listing("s", [tool(a), tool(b)])]).specs] == names


def test_names_that_sanitise_alike_on_one_server_are_told_apart():
    cat = Catalogue.build([Listing("s", [tool("a.b"), tool("a_b")])])
    names = [s.name for s in cat.specs]
    assert len(set(names)) == 2 and all(VALID.match(n) for n in names)
    assert {cat.targets[n].tool for n in names} == {"a.b", "a_b"}


def test_a_tool_listed_twice_by_one_server_is_kept_once():
    cat = Catalogue.build([Listing("s", [tool("t", description="first"), tool("t", description="second")])])
    assert [(s.name, s.description) for s in cat.specs] == [("t", "first")]


def test_specs_carry_consent_and_object_schemas():
    cat = Catalogue.build(
        [
            Listing("apify", [tool("search-actors", hint=True), tool("call-actor", hint=False)], apify=True),
            Listing("mine", [tool("look", hint=True, schema={})], trusted=True),
            Listing("theirs", [tool("peek", hint=True)]),
        ]
    )
    by_name = {s.name: s for s in cat.specs}
    assert by_name["search-actors"].read_only and not by_name["call-actor"].read_only
    assert by_name["look"].read_only and not by_name["peek"].read_only
    assert by_name["look"].parameters == {"type": "object", "properties": {}}
    function = by_name["peek"].openai_function()
    assert function["type"] == "function" and function["function"]["name"] == "peek"


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "srv one", "ü"]), st.text(min_size=1, max_size=90)),
        max_size=30,
    )
)
def test_any_names_give_valid_unique_names_that_map_back(pairs):
    listings = {}
    for server, name in pairs:
        listings.setdefault(server, []).append(tool(name))
    cat = Catalogue.build([Listing(server, tools) for server, tools in listings.items()])
    names = [s.name for s in cat.specs]
    assert len(names) == len(set(names))
    assert all(VALID.match(n) for n in names)
    expected = {(server, t.name) for server, tools in listings.items() for t in tools}
    assert {(target.server, target.tool) for target in cat.targets.values()} == expected
