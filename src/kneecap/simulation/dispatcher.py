"""One replication: the LPAR's dispatcher as callbacks on a SimPy event loop.

Every state change is a callback on a :class:`simpy.events.Timeout`; there is no generator
process per burst or per transaction. A burst costs one event (its completion), a transaction one
more (the end of its think time plus delay, or its arrival plus delay), and an eligible burst that
has to queue while GCPs may help one more (its ZIIPAWMT timer).

Time integrals are kept as ledgers, each a count of bursts in some state: five of busy engines
(where a burst runs, whose work it is) and two of the class's bursts waiting in a queue. The
integral of ledger ``k`` up to time ``t`` is ``base[k] + running[k] * t``, so the measurement window
reads them exactly. The ledgers only observe: they take no draw and schedule no event.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from typing import cast

import numpy as np
import simpy

from kneecap.simulation.scenario import SimScenario

# Busy-time ledgers: where a burst runs and whose work it is. The class's three are also its
# using states: GCP-only burst on a GCP, eligible burst on a GCP (IIPCP), eligible burst on a zIIP.
GCP_NATIVE, GCP_ELIGIBLE, ZIIP_ELIGIBLE, BG_ON_GCP, BG_ON_ZIIP = range(5)
# Delay ledgers: the class's bursts (not background) waiting in the GCP queue (CPU delay) and in
# the zIIP queue (zIIP delay).
CLASS_GCP_WAIT, CLASS_ZIIP_WAIT = 5, 6
_LEDGERS = 7
# Draws are taken from numpy in blocks: one scalar numpy call costs about as much as a SimPy event.
_BLOCK = 4096


class _Burst:
    """One piece of CPU work: its work (ms on an engine of speed 1), where it may run and whom to tell when done."""

    __slots__ = ("service_ms", "eligible", "txn", "gcp_ledger", "ziip_ledger", "ledger",
                 "queued_at", "waiting")

    def __init__(self, service_ms: float, eligible: bool, txn: _Transaction | None,
                 gcp_ledger: int, ziip_ledger: int) -> None:
        self.service_ms = service_ms
        self.eligible = eligible
        self.txn = txn
        self.gcp_ledger = gcp_ledger
        self.ziip_ledger = ziip_ledger
        self.ledger = gcp_ledger
        self.queued_at = 0.0
        self.waiting = False


class _Transaction:
    """A transaction of the measured class: when it was submitted and its bursts still to run."""

    __slots__ = ("submitted_at", "kinds")

    def __init__(self, submitted_at: float, kinds: list[bool]) -> None:
        self.submitted_at = submitted_at
        self.kinds = kinds  # True = eligible burst; run from the end


def unit_draws(rng: np.random.Generator, dist: str, cv: float | None) -> Callable[[], float]:
    """Endless draws of mean 1 from ``dist`` (``cv`` for gamma), served from numpy blocks."""
    if dist == "deterministic":
        return lambda: 1.0
    if dist == "gamma":
        assert cv is not None
        shape = 1.0 / (cv * cv)
        return _from_blocks(lambda: rng.gamma(shape, 1.0 / shape, _BLOCK))
    return _from_blocks(lambda: rng.standard_exponential(_BLOCK))


def _from_blocks(block: Callable[[], np.ndarray]) -> Callable[[], float]:
    def stream() -> Iterator[float]:
        while True:
            yield from block().tolist()

    return stream().__next__


class LparSimulation:
    """The event loop, the two engine pools and their queues, for one replication.

    See :func:`kneecap.simulation.simulate` for the dispatch rules this implements.
    """

    def __init__(self, scenario: SimScenario, *, transactions: int, warmup: int,
                 seed: np.random.SeedSequence) -> None:
        self.scenario = scenario
        self.env = simpy.Environment()
        self.transactions = transactions
        self.warmup = warmup
        rngs = [np.random.default_rng(child) for child in seed.spawn(7)]
        self.think_unit = unit_draws(rngs[0], "exponential", None)
        self.native_unit = unit_draws(rngs[1], scenario.burst_dist, scenario.burst_cv)
        self.eligible_unit = unit_draws(rngs[2], scenario.burst_dist, scenario.burst_cv)
        self.uniform = _from_blocks(lambda: rngs[3].random(_BLOCK))
        self.background_rngs = {"gcp": rngs[4], "ziip": rngs[5]}
        self.gap_unit = unit_draws(rngs[6], "exponential", None)

        f, d = scenario.ziip_eligible_fraction, scenario.cpu_ms_per_tran
        self.native_kinds = [False] * scenario.gcp_bursts if f < 1 else []
        self.eligible_kinds = [True] * scenario.eligible_bursts if f > 0 else []
        self.native_mean = (1 - f) * d / scenario.gcp_bursts
        self.eligible_mean = f * d / scenario.eligible_bursts
        # without zIIPs, eligible work is plain GCP work: same queue, same priority
        self.has_ziips = scenario.n_ziip > 0
        self.gcps_help = scenario.eligible_helped
        self.help_wait_ms = scenario.help_wait_ms
        self.pool_rule = scenario.help_rule == "pool"
        # a burst of work w runs w / speed ms on an engine (a helped burst at GCP speed)
        self.gcp_speed = scenario.gcp_speed
        self.ziip_speed = scenario.ziip_speed
        self._needs_help = False  # the pool rule's state; the burst rule never sets it

        self.free_gcp = scenario.n_gcp
        self.free_ziip = scenario.n_ziip
        self.gcp_queue: deque[_Burst] = deque()
        self.ziip_queue: deque[_Burst] = deque()
        # the integral of ledger k up to time t is base[k] + running[k] * t: entering the state
        # subtracts the time, leaving it adds the time, so a snapshot at any instant is O(1)
        self.base = [0.0] * _LEDGERS
        self.running = [0] * _LEDGERS

        self.resp_ms: list[float] = []
        self.window_start = (0.0, [0.0] * _LEDGERS)
        self.window_end = (0.0, [0.0] * _LEDGERS)
        self.done = self.env.event()

    def run(self) -> None:
        """Run until ``transactions`` transactions of the class have completed."""
        s = self.scenario
        if s.is_closed:
            assert s.clients is not None
            for _ in range(s.clients):
                self._after(self.think_unit() * s.think_time_ms + s.delay_ms, self._on_submit)
        else:
            self._after(self._gap_ms() + s.delay_ms, self._on_arrival)
        background = (("gcp", s.bg_gcp_busy_pct, s.n_gcp), ("ziip", s.bg_ziip_busy_pct, s.n_ziip))
        for pool, pct, engines in background:
            if pct > 0:  # arrival rate from the utilisation law: U = lambda * mean burst
                self._start_background(pool, pct / 100.0 * engines / s.bg_burst_ms)
        self.env.run(until=self.done)

    # --- the measured class ---------------------------------------------------------------------

    def _after(self, delay_ms: float, callback: Callable[[simpy.Event], None],
               value: object = None) -> None:
        self.env.timeout(delay_ms, value).callbacks.append(callback)

    def _gap_ms(self) -> float:
        assert self.scenario.tps is not None
        return self.gap_unit() * 1000.0 / self.scenario.tps

    def _on_arrival(self, event: simpy.Event) -> None:
        # The arrival stream is shifted by delay_ms: this event is the end of the delay of an
        # arrival delay_ms ago, which saves one event per transaction and changes no response.
        self._after(self._gap_ms(), self._on_arrival)
        self._on_submit(event)

    def _on_submit(self, _event: simpy.Event | None) -> None:
        """Start the first burst of a transaction whose delay is over, in a shuffled order."""
        kinds = self.native_kinds + self.eligible_kinds
        uniform = self.uniform
        for i in range(len(kinds) - 1, 0, -1):  # Fisher-Yates: a random burst order per transaction
            j = int(uniform() * (i + 1))
            kinds[i], kinds[j] = kinds[j], kinds[i]
        txn = _Transaction(self.env.now - self.scenario.delay_ms, kinds)
        self._next_burst(txn)

    def _next_burst(self, txn: _Transaction) -> None:
        if not txn.kinds:
            self._complete(txn)
        elif txn.kinds.pop():
            self._dispatch(_Burst(self.eligible_unit() * self.eligible_mean, True, txn,
                                  GCP_ELIGIBLE, ZIIP_ELIGIBLE))
        else:
            self._dispatch(_Burst(self.native_unit() * self.native_mean, False, txn,
                                  GCP_NATIVE, GCP_NATIVE))

    def _complete(self, txn: _Transaction) -> None:
        now = self.env.now
        self.resp_ms.append(now - txn.submitted_at)
        done = len(self.resp_ms)
        if done == self.warmup:
            self.window_start = (now, self._busy_at(now))
        if done == self.transactions:
            self.window_end = (now, self._busy_at(now))
            self.done.succeed()
        elif self.scenario.is_closed:
            pause = self.think_unit() * self.scenario.think_time_ms + self.scenario.delay_ms
            if pause > 0:
                self._after(pause, self._on_submit)
            else:
                self._on_submit(None)

    def _busy_at(self, now: float) -> list[float]:
        return [b + r * now for b, r in zip(self.base, self.running, strict=True)]

    # --- background work of other classes -------------------------------------------------------

    def _start_background(self, pool: str, per_ms: float) -> None:
        draws = unit_draws(self.background_rngs[pool], "exponential", None)
        eligible = pool == "ziip"
        # bg_burst_ms on the pool's own engines
        mean_ms = self.scenario.bg_burst_ms * (self.ziip_speed if eligible else self.gcp_speed)

        def arrive(_event: simpy.Event | None) -> None:
            self._dispatch(_Burst(draws() * mean_ms, eligible, None, BG_ON_GCP, BG_ON_ZIIP))
            self._after(draws() / per_ms, arrive)

        self._after(draws() / per_ms, arrive)

    # --- the dispatcher -------------------------------------------------------------------------

    def _dispatch(self, burst: _Burst) -> None:
        if burst.eligible and self.has_ziips:
            if self.free_ziip:
                self.free_ziip -= 1
                self._run_on(burst, burst.ziip_ledger, self._on_ziip_done, self.ziip_speed)
                return
            burst.queued_at = self.env.now
            burst.waiting = True
            self.ziip_queue.append(burst)
            if burst.txn is not None:
                self._enter(CLASS_ZIIP_WAIT)
            if self.gcps_help:
                self._help_while_needed()  # under the pool rule an idle GCP may take it at once
                if burst.waiting:
                    self._after(self.help_wait_ms, self._on_help_due, burst)
        elif self.free_gcp:
            self.free_gcp -= 1
            self._run_on(burst, burst.gcp_ledger, self._on_gcp_done, self.gcp_speed)
        else:
            self.gcp_queue.append(burst)
            if burst.txn is not None:  # without zIIPs, eligible bursts too: CPU delay
                self._enter(CLASS_GCP_WAIT)

    def _enter(self, ledger: int) -> None:
        self.base[ledger] -= self.env.now
        self.running[ledger] += 1

    def _leave(self, ledger: int) -> None:
        self.base[ledger] += self.env.now
        self.running[ledger] -= 1

    def _run_on(self, burst: _Burst, ledger: int, on_done: Callable[[simpy.Event], None], speed: float) -> None:
        burst.ledger = ledger
        self.base[ledger] -= self.env.now
        self.running[ledger] += 1
        self.env.timeout(burst.service_ms / speed, burst).callbacks.append(on_done)

    def _finish(self, burst: _Burst) -> None:
        self.base[burst.ledger] += self.env.now
        self.running[burst.ledger] -= 1

    def _on_gcp_done(self, event: simpy.Event) -> None:
        burst = cast(_Burst, event.value)  # simpy types a value as Any | None; these timeouts carry a burst
        self._finish(burst)
        # the freed GCP takes its next work before the transaction's next burst is dispatched,
        # so that burst queues behind older work (FCFS)
        if self.gcp_queue:
            nxt = self.gcp_queue.popleft()
            if nxt.txn is not None:
                self._leave(CLASS_GCP_WAIT)
            self._run_on(nxt, nxt.gcp_ledger, self._on_gcp_done, self.gcp_speed)
        elif self.gcps_help and self.ziip_queue and (
                self.needs_help or self._waited_long_enough(self.ziip_queue[0])):
            self._help(self.ziip_queue.popleft())
        else:
            self.free_gcp += 1
        if burst.txn is not None:
            self._next_burst(burst.txn)

    def _on_ziip_done(self, event: simpy.Event) -> None:
        burst = cast(_Burst, event.value)
        self._finish(burst)
        if self.ziip_queue:
            nxt = self.ziip_queue.popleft()
            nxt.waiting = False
            if nxt.txn is not None:
                self._leave(CLASS_ZIIP_WAIT)
            self._run_on(nxt, nxt.ziip_ledger, self._on_ziip_done, self.ziip_speed)
        else:
            self.free_ziip += 1
            self.needs_help = False  # a zIIP found no work: the pool keeps up again
        if burst.txn is not None:
            self._next_burst(burst.txn)

    def _on_help_due(self, event: simpy.Event) -> None:
        """ZIIPAWMT has passed for a queued eligible burst: idle GCPs start helping.

        The zIIP queue is FCFS and every timer has the same length, so its head has waited at
        least as long as this burst. No GCP is idle while GCP-native work waits. Under the burst
        rule one idle GCP takes the oldest burst; under the pool rule the pool now needs help and
        every idle GCP takes queued bursts.
        """
        burst = cast(_Burst, event.value)
        if not burst.waiting:
            return
        if self.pool_rule:
            self.needs_help = True
            self._help_while_needed()
        elif self.free_gcp:
            self.free_gcp -= 1
            self._help(self.ziip_queue.popleft())

    @property
    def needs_help(self) -> bool:
        """Whether the pool rule's zIIPs need help: from ZIIPAWMT passing until a zIIP finds no work."""
        return self._needs_help

    @needs_help.setter
    def needs_help(self, value: bool) -> None:
        if value != self._needs_help:
            self._needs_help = value
            self._help_changed(value)

    def _help_changed(self, on: bool) -> None:
        """Called where the pool starts (``on``) or stops needing help; does nothing here.

        Instrumented runs override it to log the help phases (``benchmarks/probe_help_phases.py``,
        ``benchmarks/probe_pool_flush.py``).
        """

    def _help_while_needed(self) -> None:
        while self.needs_help and self.free_gcp and self.ziip_queue:
            self.free_gcp -= 1
            self._help(self.ziip_queue.popleft())

    def _waited_long_enough(self, burst: _Burst) -> bool:
        # the same sum SimPy used to schedule the burst's timer, so the two agree to the last bit
        return burst.queued_at + self.help_wait_ms <= self.env.now

    def _help(self, burst: _Burst) -> None:
        """A GCP takes ``burst``, just taken off the zIIP queue (its zIIP delay ends)."""
        burst.waiting = False
        if burst.txn is not None:
            self._leave(CLASS_ZIIP_WAIT)
        self._run_on(burst, burst.gcp_ledger, self._on_gcp_done, self.gcp_speed)


def replication_metrics(sim: LparSimulation) -> dict[str, float]:
    """Measured metrics of a finished replication over its window (warm-up excluded).

    Percentages are RMF APPL% style (100 = one engine busy all the window) for the class's CPU,
    per-engine % for pool busy. ``n_*`` are time-average numbers of the class's transactions
    (each runs one burst at a time, so bursts = transactions) in each WLM CPU state, what
    250 ms state samples estimate (see :func:`kneecap.simulation.simulate`).
    """
    s = sim.scenario
    (t0, busy0), (t1, busy1) = sim.window_start, sim.window_end
    span = t1 - t0
    # the using states are the class's busy ledgers; averaged before scaling to per cent
    mean_count = [(b1 - b0) / span for b0, b1 in zip(busy0, busy1, strict=True)]
    busy = [(b1 - b0) / span * 100.0 for b0, b1 in zip(busy0[:5], busy1[:5], strict=True)]
    resp = np.asarray(sim.resp_ms[sim.warmup:])
    eligible_pct = busy[GCP_ELIGIBLE] + busy[ZIIP_ELIGIBLE]
    return {
        "tps": len(resp) / span * 1000.0,
        "resp_ms": float(resp.mean()),
        "resp_p95_ms": float(np.percentile(resp, 95)),
        "cpu_total_pct": busy[GCP_NATIVE] + eligible_pct,
        "cpu_gcp_pct": busy[GCP_NATIVE] + busy[GCP_ELIGIBLE],
        "cpu_ziip_pct": busy[ZIIP_ELIGIBLE],
        "ziip_eligible_on_gcp_pct": busy[GCP_ELIGIBLE],
        "ziip_eligible_pct": eligible_pct,
        "ziip_eligible_on_gcp_share_pct": busy[GCP_ELIGIBLE] / eligible_pct * 100.0 if eligible_pct > 0 else math.nan,
        "gcp_busy_pct": (busy[GCP_NATIVE] + busy[GCP_ELIGIBLE] + busy[BG_ON_GCP]) / s.n_gcp,
        "ziip_busy_pct": ((busy[ZIIP_ELIGIBLE] + busy[BG_ON_ZIIP]) / s.n_ziip if s.n_ziip
                          else math.nan),
        "n_gcp_using": mean_count[GCP_NATIVE],
        "n_ziip_using": mean_count[ZIIP_ELIGIBLE],
        "n_ziip_on_cp_using": mean_count[GCP_ELIGIBLE],
        "n_gcp_delay": mean_count[CLASS_GCP_WAIT],
        "n_ziip_delay": mean_count[CLASS_ZIIP_WAIT],
    }
