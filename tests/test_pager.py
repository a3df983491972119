"""The pager at its edges: every long result is cut into pages whose ids never repeat, each
page says where it is and where the rest is, and an id that is gone says why (issue 39: the
mutation run found these edges untested)."""

from __future__ import annotations

import pytest

from venice_terminal_agent import ToolError
from venice_terminal_agent.core.pager import Pager


def test_a_page_is_at_least_100_characters() -> None:
    with pytest.raises(ValueError, match="page_chars must be at least 100"):
        Pager(99)
    assert Pager(100).page_chars == 100


def test_two_long_results_get_ids_of_their_own_and_each_page_says_where_it_is() -> None:
    pager = Pager(100)
    first = pager.cut("a" * 250)  # ids 1-3
    second = pager.cut("b" * 150)  # ids 4-5, never 1-2 again
    assert first.startswith("a" * 100) and "call page(id=2)" in first
    assert "[page 1 of 3, id 1: characters up to 100 of 250; 150 more characters in page ids 2-3" in first
    assert "[page 1 of 2, id 4: characters up to 100 of 150; 50 more characters in page id 5" in second
    assert pager.get(2).startswith(
        "a" * 100
    ) and "[page 2 of 3, id 2: characters up to 200 of 250" in pager.get(2)
    assert (
        pager.get(3).startswith("a" * 50 + "\n")
        and "id 3" in pager.get(3)
        and "the last page" in pager.get(3)
    )
    assert pager.get(5).startswith("b" * 50 + "\n") and "[page 2 of 2, id 5:" in pager.get(5)
    assert pager.next_id == 6 and len(pager) == 5


def test_a_page_handed_back_is_not_cut_again() -> None:
    pager = Pager(100)
    pager.cut("c" * 300)
    page = pager.get(2)
    assert len(page) > 100 and pager.cut(page) == page  # its note made it longer than a page
    assert pager.next_id == 4


def test_forget_drops_the_pages_from_its_id_on_and_keeps_those_before() -> None:
    pager = Pager(100)
    pager.cut("a" * 250)  # 1-3
    pager.cut("b" * 150)  # 4-5
    pager.forget(since=4)
    assert len(pager) == 3 and pager.get(3).startswith("a")
    with pytest.raises(ToolError, match=r"no page with id 4 \(known: ids 1 to 3\)"):
        pager.get(4)
    pager.clear()
    assert len(pager) == 0
    with pytest.raises(ToolError, match=r"no page with id 1 \(known: none yet\)"):
        pager.get(1)


@pytest.mark.parametrize("asked", [0, -1, 7, "x", None])
def test_an_id_never_cut_is_refused_naming_those_known(asked: object) -> None:
    pager = Pager(100)
    pager.cut("a" * 250)
    with pytest.raises(ToolError, match=r"\(known: ids 1 to 3\)") as refused:
        pager.get(asked)  # type: ignore[arg-type]
    assert f"no page with id {asked!r}" in str(refused.value)


def test_pages_of_an_earlier_run_have_expired_from_the_first_id_on() -> None:
    pager = Pager(100)
    pager.expire_until(4)  # a resumed conversation had handed out ids 1-3
    for expired in (1, 3):
        with pytest.raises(ToolError, match=f"page {expired} has expired"):
            pager.get(expired)
    assert "id 4:" in pager.cut("a" * 150)  # new pages go on from there
    with pytest.raises(ToolError, match="no page with id 0"):
        pager.get(0)


def test_the_oldest_pages_go_once_the_pager_holds_more_than_its_most_and_say_so() -> None:
    pager = Pager(100)
    first = pager.cut("a" * 200)  # two pages, each 100 characters and its note
    kept = sum(len(pager.get(page)) for page in (1, 2))
    assert first == pager.get(1)
    exact = Pager(100, max_chars=kept)
    exact.cut("a" * 200)
    assert len(exact) == 2  # exactly the most: nothing dropped
    over = Pager(100, max_chars=kept - 1)
    over.cut("a" * 200)
    assert len(over) == 1 and over.get(2).startswith("a")
    with pytest.raises(ToolError, match=r"page 1 was dropped to save memory .*known: ids 2 to 2"):
        over.get(1)
