"""Long results cut into numbered pages that the `page` tool hands back one at a time.

A tool result longer than a page is replaced by its first page and a note saying how much was
cut and which page ids hold the rest, so a model (or a plan) never drowns in one result and
nothing is lost.
"""

from __future__ import annotations

from .defaults import PAGE_CHARS
from .errors import ToolError

DEFAULT_PAGE_CHARS = PAGE_CHARS  # its name before defaults.py
MAX_KEPT_CHARS = 20_000_000  # the most page text one pager holds (about 40 MB); oldest go first


class Pager:
    """Keeps the pages of one run (or one conversation); ids start at 1 and never repeat."""

    def __init__(self, page_chars: int = DEFAULT_PAGE_CHARS, *, max_chars: int = MAX_KEPT_CHARS) -> None:
        if page_chars < 100:
            raise ValueError("page_chars must be at least 100")
        self.page_chars = page_chars
        self.max_chars = max_chars
        self._pages: dict[int, str] = {}  # oldest first
        self._kept = 0  # characters in `_pages`
        self._next_id = 1
        self._issued: set[str] = set()  # pages handed out (their notes make them longer than a page)
        self._dropped = 0  # ids up to this one were dropped (to save memory, or by `forget`)
        self._expired = 0  # ids up to this one were handed out before this run (a resumed session)

    @property
    def next_id(self) -> int:
        """The id the next page will get: a mark for `forget(since=...)`."""
        return self._next_id

    def expire_until(self, next_id: int) -> None:
        """Pages below `next_id` were handed out by an earlier run of the conversation (a
        resumed session) and are not kept: new pages get new ids, and asking for an old one
        says it has expired."""
        self._next_id = max(self._next_id, next_id)
        self._expired = max(self._expired, next_id - 1)

    def clear(self) -> None:
        """Drop every page (the conversation they belong to was cleared)."""
        self.forget(since=1)

    def forget(self, *, since: int) -> None:
        """Drop the pages whose id is `since` or more (a question rolled back)."""
        for page_id in [page_id for page_id in self._pages if page_id >= since]:
            self._drop(page_id)

    def __len__(self) -> int:
        return len(self._pages)

    def cut(self, text: str) -> str:
        """`text` itself when it fits in a page, else its first page and a note."""
        size = self.page_chars
        if len(text) <= size or text in self._issued:
            return text
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        ids = list(range(self._next_id, self._next_id + len(chunks)))
        self._next_id += len(chunks)
        total = len(chunks)
        for number, (page_id, chunk) in enumerate(zip(ids, chunks, strict=True), start=1):
            self._pages[page_id] = chunk + self._footer(number, total, ids, len(text))
        self._issued.update(self._pages[page_id] for page_id in ids)
        self._kept += sum(len(self._pages[page_id]) for page_id in ids)
        first = self._pages[ids[0]]
        while self._kept > self.max_chars and len(self._pages) > 1:
            oldest = next(iter(self._pages))
            self._drop(oldest)
            self._dropped = max(self._dropped, oldest)
        return first

    def get(self, page_id: int) -> str:
        try:
            return self._pages[int(page_id)]
        except (KeyError, TypeError, ValueError):
            known = f"ids {min(self._pages)} to {max(self._pages)}" if self._pages else "none yet"
            if isinstance(page_id, int) and 0 < page_id <= self._expired:
                raise ToolError(
                    f"page {page_id} has expired: it was cut in an earlier run of this conversation, "
                    "and pages are not kept; run the tool again for it"
                ) from None
            if isinstance(page_id, int) and 0 < page_id <= self._dropped:
                raise ToolError(
                    f"page {page_id} was dropped to save memory (only the latest pages are kept; "
                    f"known: {known}); run the tool again for it"
                ) from None
            raise ToolError(f"no page with id {page_id!r} (known: {known})") from None

    def _drop(self, page_id: int) -> None:
        page = self._pages.pop(page_id)
        self._kept -= len(page)
        self._issued.discard(page)

    def _footer(self, number: int, total: int, ids: list[int], length: int) -> str:
        rest = ids[number:]
        shown = min(number * self.page_chars, length)
        head = f"\n[page {number} of {total}, id {ids[number - 1]}: characters up to {shown} of {length}"
        if not rest:
            return head + "; this is the last page]"
        cut = length - shown
        where = f"page id {rest[0]}" if len(rest) == 1 else f"page ids {rest[0]}-{rest[-1]}"
        return head + f"; {cut} more characters in {where}: call page(id={rest[0]})]"
