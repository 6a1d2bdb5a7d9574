"""Replaying an AIPerf Conversation DAG (`bench.workloads.trace_dag`) as one load point.

The file says nothing of when its roots arrive, so the run's load does: `concurrency` roots at
once (a root's whole tree, children included, holds its slot until every request of it is
done; each root once, in file order), or roots started at the offsets of a Poisson process at
`rate`. Within a conversation the turns go in order, each after its `delay`; a turn sends the
conversation's history (its fork parent's, the turns so far with the replies the server
actually gave) and its own messages. When a turn completes, its forks start with that history
and reply, its spawns with an empty history; a turn that a spawn joins at waits until those
subagents (and everything they started) finished. A conversation ends when its turns and all
its children are done; a failed turn ends its conversation (its history would be wrong), and
the children it would have started are not sent.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator

from infermeter.bench.client.request_record import PromptRequest
from infermeter.bench.run.load import PointRun, Send, arrival_offsets_s
from infermeter.bench.workloads.trace_dag import Dag, DagConversation, DagTurn, Messages
from infermeter.calculators.units import NS_PER_S


class _Replay:
    def __init__(self, send: Send, dag: Dag, run: PointRun) -> None:
        self.send, self.dag, self.run = send, dag, run
        self.indexes: Iterator[int] = itertools.count(run.plan.first_index)
        self.sessions: Iterator[int] = itertools.count()

    async def conversation(self, conversation: DagConversation, history: Messages) -> None:
        """One start of `conversation`, from `history`, and every child it starts."""
        session = next(self.sessions)
        children: list[asyncio.Task[None]] = []
        joins: dict[int, list[asyncio.Task[None]]] = {}
        for number, turn in enumerate(conversation.turns):
            await asyncio.gather(*joins.pop(number, []))
            history += turn.messages
            reply = await self.turn(turn, history, session, number + 1)
            if reply is None:
                break
            history += (("assistant", reply),)
            for child in turn.forks:
                children.append(self.start(child, history))
            for child, join_at in turn.spawns:
                task = self.start(child, ())
                joins.setdefault(join_at, []).append(task)
                children.append(task)
        await asyncio.gather(*children)

    def start(self, session_id: str, history: Messages) -> asyncio.Task[None]:
        return asyncio.create_task(self.conversation(self.dag.conversations[session_id], history))

    async def turn(self, turn: DagTurn, history: Messages, session: int, number: int) -> str | None:
        """Send one turn after its delay; its reply's text, or None when it failed."""
        intended_ns = time.monotonic_ns() + int(turn.delay_ms / 1000 * NS_PER_S)
        if turn.delay_ms:
            await asyncio.sleep(turn.delay_ms / 1000)
        words = sum(len(content.split()) for _, content in history)
        prompt = PromptRequest(
            index=next(self.indexes),
            prompt="",
            max_tokens=turn.max_tokens,
            input_tokens=max(words, 1),
            expected_output_tokens=turn.max_tokens,
            messages=history,
            session=session,
            turn=number,
        )
        record = await self.send(prompt, intended_ns)
        self.run.records.append(record)
        return (record.output_text or "") if record.ok else None


async def run_dag(send: Send, dag: Dag, run: PointRun) -> PointRun:
    """Replay `dag` into `run` at the load of its plan, `run.plan` (see the module docstring);
    records sorted by index."""
    replay = _Replay(send, dag, run)
    roots = [dag.conversations[root] for root in dag.roots]
    rate, concurrency = run.plan.request_rate, run.plan.concurrency
    cpu_start = time.process_time()
    start_ns = time.monotonic_ns()
    if rate is not None:
        tasks = []
        for offset, root in zip(arrival_offsets_s(rate, seed=run.plan.seed, count=len(roots)),
                                roots, strict=True):  # fmt: skip
            delay_ns = start_ns + int(offset * NS_PER_S) - time.monotonic_ns()
            if delay_ns > 0:
                await asyncio.sleep(delay_ns / NS_PER_S)
            tasks.append(asyncio.create_task(replay.conversation(root, ())))
        await asyncio.gather(*tasks)
    else:
        queue = iter(roots)

        async def slot() -> None:
            for root in queue:
                await replay.conversation(root, ())

        await asyncio.gather(*(slot() for _ in range(concurrency or 1)))
    return run.finish(cpu_start, (time.monotonic_ns() - start_ns) / NS_PER_S)
