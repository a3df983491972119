"""`venice-agent batch FILE`, `batch status` and `batch resume`: the bodies (cli/batch_app.py
declares them).

A batch is named by its file's digest (or `--name`) and lives in the batch database: DBOS's
tables and the ledger's (ledger.py) side by side, a SQLite file in the user's data folder
unless `--db` (or VENICE_AGENT_BATCH_DB) names a PostgreSQL URL that several hosts share. The
same command on another host joins the batch: each process enqueues every question under the
same workflow ids (DBOS keeps one), works `--workers` of them at a time, and prints every
receipt of the batch in the order they finished, until each question has one.

Each process takes a worker slot on its host (slots.py) and recovers the questions of the
workers that died; a question whose workflow failed (a bug) is said, and the command ends 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from ...core.errors import CRASH_STATUS, ConfigError, VeniceAgentError
from ...core.exits import EXIT_STATUS, UNANSWERED_STATUS, USAGE_ERROR_STATUS, Exit
from ...core.record import Record
from .ledger import usd
from .progress import Progress, summary
from .questions import Question, read_questions
from .slots import Slot, data_folder

DB_ENV = "VENICE_AGENT_BATCH_DB"
POLICY = "a batch runs with no one to ask: give --yes when it starts for the calls that need one"
RECOVER_EVERY = 2.0  # seconds between two looks for the questions of workers that died


class Options(Record):
    """The command line of `batch` and `batch resume`."""

    workers: int = 4
    max_usd: float | None = None  # the whole batch's cap, shared by every worker
    call_usd: float = 0.0  # reserved and charged for each tool call
    output: Path | None = None
    db: str | None = None
    name: str | None = None
    yes: bool = False
    progress: bool | None = None  # None: when stderr is a terminal


def database_url(given: str | None) -> str:
    """--db, else VENICE_AGENT_BATCH_DB, else a SQLite file in the user's data folder. A plain
    path is a SQLite file."""
    url = given or os.environ.get(DB_ENV)
    if not url:
        folder = data_folder()
        folder.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{folder / 'batch.sqlite'}"
    if "://" not in url:
        path = Path(url).expanduser().resolve()
        if path.is_dir():
            raise ConfigError(
                f"--db {url}: a folder; give a file for the SQLite database, or a postgresql:// URL"
            )
        return f"sqlite:///{path}"
    if not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
        raise ConfigError(
            f"--db: a SQLite file, sqlite:///PATH or postgresql://…, not {url.split('://')[0]}://"
        )
    return url


class Worker:
    """What the workflows of this process share: the runtime (model client, tools), the ledger."""

    def __init__(self, runtime: Any, ledger: Any, options: Options) -> None:
        self.runtime, self.ledger, self.options = runtime, ledger, options
        self.models: dict[str, Any] = {}  # a question's own model: its runtime, facts read once
        self.running = 0
        self.finished = asyncio.Event()

    async def runtime_for(self, model: str | None) -> Any:
        if model is None or model == self.runtime.model:
            return self.runtime
        if model not in self.models:
            facts = await self.runtime.client.model_facts(model)
            self.models[model] = self.runtime.replace(model=model, facts=facts, _privacy=None)
        return self.models[model]

    async def answer(self, batch_id: str, line: dict[str, Any]) -> dict[str, Any]:
        from dbos import DBOS

        from .durable import Account, LedgerModel, LedgerToolbox, Stopping

        question = Question.from_json(line)
        workflow_id = DBOS.workflow_id
        assert workflow_id is not None
        account = Account(self.ledger, batch_id, workflow_id, Stopping())
        self.running += 1
        try:
            runtime = await self.runtime_for(question.model)
            tools = runtime.consented(
                tools=LedgerToolbox(runtime.tools, account, self.options.call_usd),
                auto_approve=self.options.yes,
                policy=None if self.options.yes else POLICY,
            )
            agent = runtime.agent(tools, instruction=question.system)
            agent.client = LedgerModel(runtime.client, account, runtime.facts, agent.search_usd)
            given = (question.max_usd, runtime.settings.max_usd, self.options.max_usd)
            caps = [cap for cap in given if cap is not None]
            agent.max_usd = min(caps, default=None)
            if question.max_rounds is not None:
                agent.max_rounds = question.max_rounds
            problem = agent.cannot_cap() if agent.max_usd is not None else None
            if problem is not None:
                data: dict[str, Any] = {
                    "stopped_because": Exit.MODEL_ERROR.value,
                    "answer": None,
                    "refusal": problem,
                }
            else:
                receipt = await agent.ask(question.question, budget=question.budget)
                data = receipt.to_dict()
                stopping = account.stopping
                if stopping.exit is not None and stopping.exit.value != data["stopped_because"]:
                    data["loop_stopped_because"] = data["stopped_because"]
                    data["stopped_because"], data["refusal"] = stopping.exit.value, stopping.refusal
            cost = await asyncio.to_thread(self.ledger.charged, workflow_id)
            data = {"id": question.id, **data, "cost_usd": usd(cost), "line": question.line}
            await asyncio.to_thread(
                self.ledger.finish, batch_id, question.id, data["stopped_because"], cost, data
            )
            return data
        finally:
            self.running -= 1
            self.finished.set()


def batch_name(options: Options, digest: str) -> str:
    name = options.name or f"b-{digest}"
    if not name.replace("-", "").replace("_", "").isalnum() or len(name) > 60:
        raise ConfigError(f"--name {name}: letters, digits, - and _ only, at most 60")
    return name


def money_problem(options: Options) -> str | None:
    """What is wrong with the batch's own money options, said as a bad setting is; None if
    nothing. The ledger counts whole nano-USD, so each is a finite number (an infinite cap would
    cap nothing), and a cap is more than 0, as every --max-usd is."""
    cap, price = options.max_usd, options.call_usd
    if cap is not None and not (math.isfinite(cap) and cap > 0):
        return f"bad setting: --max-usd: must be a finite number more than 0, not {cap:g}"
    if not (math.isfinite(price) and price >= 0):
        return f"bad setting: --call-usd: must be a finite number, 0 or more, not {price:g}"
    return None


def run(source: str, options: Options, flags: Any) -> int:
    """`venice-agent batch FILE`."""
    try:
        if problem := money_problem(options):
            raise ConfigError(problem)
        questions, digest = read_questions(source)
        batch_id = batch_name(options, digest)
    except ConfigError as error:
        print(f"venice-agent batch: {error.message}", file=sys.stderr)
        return USAGE_ERROR_STATUS
    lines = [question.to_json() for question in questions]
    return _main(batch_id, lines, options, flags, source=source)


def resume_batch(batch_id: str, options: Options, flags: Any) -> int:
    """`venice-agent batch resume ID`: the batch's questions come from its database."""
    try:
        url = database_url(options.db)
        ledger = _ledger(url)
        try:
            batch = ledger.batch(batch_id)
            if batch is None:
                raise ConfigError(
                    f"no batch {batch_id} in {_shown(url)} (venice-agent batch status lists them)"
                )
            lines = ledger.questions(batch_id)
            cap = None if batch.cap_nusd is None else usd(batch.cap_nusd)
            call_usd = usd(batch.call_nusd)
        finally:
            ledger.close()
    except VeniceAgentError as error:
        print(f"venice-agent batch resume: {error.message}", file=sys.stderr)
        return error.exit_status
    return _main(batch_id, lines, options.replace(max_usd=cap, call_usd=call_usd), flags, source=batch.source)


def status(batch_id: str | None, db: str | None) -> int:
    """`venice-agent batch status [ID]`: each batch (or one) with its counts and money."""
    try:
        url = database_url(db)
        ledger = _ledger(url)
        try:
            rows = ledger.batches() if batch_id is None else [ledger.batch(batch_id)]
            if rows == [None]:
                raise ConfigError(f"no batch {batch_id} in {_shown(url)}")
            if not rows:
                print(f"no batches in {_shown(url)}")
            for row in rows:
                totals = ledger.totals(row.batch_id)
                print(f"{row.batch_id} ({row.source}): {summary(totals)}")
        finally:
            ledger.close()
    except VeniceAgentError as error:
        print(f"venice-agent batch status: {error.message}", file=sys.stderr)
        return error.exit_status
    return 0


def _ledger(url: str) -> Any:
    from .ledger import Ledger

    ledger = Ledger(url)
    try:
        ledger.create()
    except Exception as error:  # the database cannot be reached or written: said in one line
        ledger.close()
        raise ConfigError(f"the batch database {_shown(url)} cannot be used: {_first_line(error)}") from None
    return ledger


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200] if text else ''}"


def _shown(url: str) -> str:
    """A database URL without its password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://…@{rest.split('@', 1)[1]}"
    return url


def _main(batch_id: str, lines: list[dict[str, Any]], options: Options, flags: Any, *, source: str) -> int:
    try:
        return asyncio.run(_work(batch_id, lines, options, flags, source))
    except KeyboardInterrupt:
        print(f"\nvenice-agent batch: stopped; venice-agent batch resume {batch_id} goes on", file=sys.stderr)
        return EXIT_STATUS[Exit.CANCELLED]
    except VeniceAgentError as error:
        print(f"venice-agent batch: {error.message}", file=sys.stderr)
        return error.exit_status


async def _work(batch_id: str, lines: list[dict[str, Any]], options: Options, flags: Any, source: str) -> int:
    from ..person import NOBODY
    from ..runtime import open_runtime
    from ..settings_load import load

    url = database_url(options.db)
    settings, servers = load(flags)
    ledger = await asyncio.to_thread(_ledger, url)
    try:
        await asyncio.to_thread(ledger.open_batch, batch_id, options.max_usd, options.call_usd, source, lines)
        async with open_runtime(settings, servers, NOBODY) as runtime:
            if options.max_usd is not None and (runtime.facts is None or runtime.facts.prices is None):
                why = getattr(runtime.facts, "listing_error", None)
                raise ConfigError(
                    f"--max-usd needs the model's prices, and the server lists none for {runtime.model}"
                    + (f" (its model list failed: {why})" if why else "")
                )
            worker = Worker(runtime, ledger, options)
            out = open(options.output, "a", encoding="utf-8") if options.output else None  # noqa: ASYNC230
            try:
                return await _drive(batch_id, lines, url, worker, out or sys.stdout)
            finally:
                if out is not None:
                    out.close()
    finally:
        ledger.close()


async def _drive(batch_id: str, lines: list[dict[str, Any]], url: str, worker: Worker, out: IO[str]) -> int:
    from dbos import DBOS, SetWorkflowID

    from ... import __version__
    from . import durable

    options = worker.options
    slot = Slot(url)
    durable.WORKER = worker
    config: Any = {
        "name": "venice-agent-batch",
        "system_database_url": url,
        "executor_id": slot.executor,
        "application_version": f"venice-agent-{__version__}",
        "log_level": "ERROR",
    }
    started = time.monotonic()
    try:
        try:
            DBOS(config=config)
            DBOS.launch()  # from this loop: DBOS runs the workflows on it, beside the runtime they share
        except Exception as error:  # the database went away since the ledger opened it, say
            raise ConfigError(f"DBOS cannot start on {_shown(url)}: {_first_line(error)}") from None
        queue = await DBOS.register_queue_async(
            f"venice-batch-{batch_id}",
            worker_concurrency=options.workers,
            polling_interval_sec=0.05,
            on_conflict="always_update",
        )
        for line in lines:
            with SetWorkflowID(f"{batch_id}:{line['id']}"):
                await queue.enqueue_async(durable.answer_question, batch_id, line)
        progress = Progress(options.progress, batch_id, started)
        # PostgreSQL numbers receipts as they are inserted, and their transactions may commit in
        # another order: each look reads from the lowest number not yet seen (`floor`) and skips
        # those already written, so a receipt that commits late is never missed.
        seen: set[int] = set()
        floor, written, last_look = 0, 0, 0.0
        while True:
            for seq, receipt in await asyncio.to_thread(worker.ledger.receipts_after, batch_id, floor):
                if seq in seen:
                    continue
                seen.add(seq)
                written += 1
                out.write(receipt + "\n")
                out.flush()
            while floor + 1 in seen:
                seen.discard(floor + 1)
                floor += 1
            totals = await asyncio.to_thread(worker.ledger.totals, batch_id)
            progress.show(totals, worker.running)
            if totals.done >= totals.questions and written >= totals.questions:
                break
            if time.monotonic() - last_look > RECOVER_EVERY:
                last_look = time.monotonic()
                failed = await _recover_dead(slot, batch_id)
                if failed and totals.done + len(failed) >= totals.questions and written >= totals.done:
                    progress.done(totals)
                    names = ", ".join(sorted(failed)[:5]) + (" …" if len(failed) > 5 else "")
                    print(
                        f"venice-agent batch: {len(failed)} question(s) failed inside venice-agent, "
                        f"with no receipt ({names}): a bug, please report it",
                        file=sys.stderr,
                    )
                    return CRASH_STATUS
            worker.finished.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(worker.finished.wait(), 0.25)
        progress.done(totals)
        return 0 if totals.exits.get(Exit.ANSWERED.value, 0) == totals.questions else UNANSWERED_STATUS
    finally:
        await asyncio.to_thread(DBOS.destroy)
        slot.file.close()


async def _recover_dead(slot: Slot, batch_id: str) -> list[str]:
    """Hand back to the queue the unfinished questions of this host's workers that died; the
    questions of the batch whose workflow failed (an exception: a bug), by id."""
    from dbos import DBOS

    from .durable import WORKFLOW

    failed = await DBOS.list_workflows_async(
        status="ERROR", workflow_id_prefix=f"{batch_id}:", load_input=False, load_output=False
    )

    pending = await DBOS.list_workflows_async(
        status="PENDING", name=WORKFLOW, load_input=False, load_output=False
    )
    for executor in sorted({workflow.executor_id for workflow in pending if workflow.executor_id}):
        lock = slot.dead(executor)
        if lock is None:
            continue
        try:
            await asyncio.to_thread(DBOS._recover_pending_workflows, [executor])
        finally:
            lock.close()
    return [workflow.workflow_id.split(":", 1)[1] for workflow in failed]
