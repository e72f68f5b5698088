"""Who may ask the model now: as many requests as the backend runs at once, a bounded queue
behind them, and a clear "busy, come back in N s" (429 with Retry-After) for everyone past it.

Without it a burst of editor requests would pile up as threads blocked inside the backend, each
holding a connection for minutes; with it the queue's length is the only wait anybody gets.
Runs on the server's event loop; nothing here is thread-safe, nothing needs to be.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Busy(Exception):
    """Every slot is taken and the queue is full."""

    def __init__(self, retry_after_s: int, running: int, waiting: int) -> None:
        super().__init__(
            f"DocDesk is answering {running} questions and {waiting} are waiting: retry in {retry_after_s} s"
        )
        self.retry_after_s = retry_after_s


class Closing(Exception):
    """The server is shutting down: nobody new gets a slot, and the queue is sent away."""


class Admission:
    def __init__(self, slots: int, queue: int, typical_answer_s: float = 10.0) -> None:
        self.slots = max(1, slots)
        self.queue = max(0, queue)
        self.running = 0
        self._waiting: deque[asyncio.Future] = deque()
        self._typical_s = typical_answer_s  # a running average of how long a slot is held
        self.admitted = self.refused = 0
        self.most_running = 0  # the most answers ever held at once: never above `slots`
        self.closed = False

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiting if not f.done())

    def retry_after_s(self) -> int:
        """When a slot is likely free for a newcomer: the queue ahead drained at the usual pace."""
        rounds = (self.waiting + 1) / self.slots
        return max(1, min(120, math.ceil(rounds * self._typical_s)))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the backend's slots for the block; raises Busy when the queue is full.
        A waiter that is cancelled (its client went away) leaves the queue at once."""
        if self.closed:
            raise Closing
        if self.running < self.slots and not self.waiting:
            self.running += 1
        elif self.waiting >= self.queue:
            self.refused += 1
            raise Busy(self.retry_after_s(), self.running, self.waiting)
        else:
            turn = asyncio.get_running_loop().create_future()
            self._waiting.append(turn)
            try:
                await turn
            except BaseException:
                if turn.done() and not turn.cancelled() and turn.exception() is None:
                    self._hand_on()  # the slot was handed to us just as we left: pass it on
                else:
                    turn.cancel()
                raise
        self.admitted += 1
        self.most_running = max(self.most_running, self.running)
        started = time.monotonic()
        try:
            yield
        finally:
            self._typical_s = 0.8 * self._typical_s + 0.2 * (time.monotonic() - started)
            self._hand_on()

    def summary(self) -> str:
        return f"{self.admitted} answered, at most {self.most_running} at once, {self.refused} told to retry"

    def close(self) -> None:
        """Shutting down: every waiter gets Closing now, and so does everyone after."""
        self.closed = True
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_exception(Closing())

    def _hand_on(self) -> None:
        """A slot came free: to the longest waiter still there, else back to the pool."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # `running` stays: the slot changes hands
                return
        self.running -= 1
