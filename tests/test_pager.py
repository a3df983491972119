"""The pager at its edges: every long result is cut into pages whose ids never repeat, each
page says where it is and where the rest is, and an id that is gone says why (issue 39: the
mutation run found these edges untested)."""

from __future__ import annotations

import pytest

from venice_terminal_agent import ToolError
from venice_terminal_agent.core.pager import Pager


def test_a_page_is_at_least_100_characters() -> None:
    with pytest.raises(ValueError, match=r"^page_chars must be at least 100$"):
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


def test_the_first_id_after_those_expired_is_not_said_to_have_expired() -> None:
    pager = Pager(100)
    pager.expire_until(4)
    with pytest.raises(
        ToolError, match=r"page 3 has expired: .* and pages are not kept; run the tool again for it"
    ):
        pager.get(3)
    with pytest.raises(ToolError, match=r"^no page with id 4 \(known: none yet\)$"):
        pager.get(4)  # not cut yet: unknown, not expired


def test_a_result_exactly_one_page_long_is_handed_over_whole_with_no_note() -> None:
    pager = Pager(100)
    assert pager.cut("a" * 100) == "a" * 100
    assert len(pager) == 0 and pager.next_id == 1
    assert pager.cut("a" * 101).startswith("a" * 100 + "\n[page 1 of 2, id 1:")


def test_each_note_names_the_pages_left_from_the_next_to_the_last() -> None:
    pager = Pager(100)
    first = pager.cut("a" * 350)  # ids 1-4
    assert first.endswith("; 250 more characters in page ids 2-4: call page(id=2)]")
    assert pager.get(2).endswith("; 150 more characters in page ids 3-4: call page(id=3)]")
    assert pager.get(3).endswith("; 50 more characters in page id 4: call page(id=4)]")
    assert (
        pager.get(4) == "a" * 50 + "\n[page 4 of 4, id 4: characters up to 350 of 350; this is the last page]"
    )


def _kept_like_the_readme_says(steps: list[tuple[str, int]], most: int) -> None:
    """Replays `steps` (("cut", length) or ("forget", since)) on a pager holding at most `most`
    characters and on a model of the promise: the newest pages that fit are kept (the oldest go
    first), never fewer than one, and forgotten pages free their room."""
    pager = Pager(100, max_chars=most)
    sizes = Pager(100, max_chars=10**9)  # the same pages, none dropped: their lengths
    kept: list[int] = []  # the ids the model keeps, oldest first
    for step, value in steps:
        if step == "cut":
            first_id = sizes.next_id
            pager.cut("x" * value)
            sizes.cut("x" * value)
            kept += range(first_id, sizes.next_id)
            while sum(len(sizes.get(page)) for page in kept) > most and len(kept) > 1:
                kept.pop(0)
        else:
            pager.forget(since=value)
            sizes.forget(since=value)
            kept = [page for page in kept if page < value]
        assert len(pager) == len(kept), (step, value, kept)
        for page in kept:
            assert pager.get(page) == sizes.get(page)


def test_the_pager_keeps_the_newest_pages_that_fit_as_results_come_and_go() -> None:
    one = len(Pager(100).cut("x" * 200)) * 2  # about what a 200-character result keeps
    _kept_like_the_readme_says([("cut", 200), ("cut", 200), ("cut", 200), ("cut", 200)], most=one * 2)
    _kept_like_the_readme_says(
        [("cut", 200), ("cut", 200), ("forget", 3), ("cut", 200), ("cut", 200), ("cut", 400)], most=one * 2
    )
    _kept_like_the_readme_says(
        [("cut", 300), ("cut", 300), ("forget", 1), ("cut", 300), ("cut", 300)], most=one * 2
    )


def test_a_result_bigger_than_the_most_kept_keeps_its_last_page() -> None:
    pager = Pager(100, max_chars=50)
    first = pager.cut("a" * 250)  # three pages, each more than the most
    assert first.startswith("a" * 100)  # the first page is still handed over
    assert len(pager) == 1 and pager.get(3).startswith("a" * 50 + "\n")
    with pytest.raises(ToolError, match="page 2 was dropped to save memory"):
        pager.get(2)


def test_a_page_no_longer_kept_is_paged_again_when_it_comes_back_as_a_result() -> None:
    pager = Pager(100)
    pager.cut("d" * 300)
    page = pager.get(1)
    pager.forget(since=1)  # the question that got it was rolled back
    again = pager.cut(page)  # now just a long text: paged like any other
    assert again != page and again.startswith("d" * 100 + "\n[page 1 of 3, id 4:")
