"""How many clusters doctor reads at once: one more only while the process waits, never above --parallel."""

from __future__ import annotations

from kubectl_win.fleet.pace import BUSY, WINDOW, Demand, Pace


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.wanted = 0.0

    def advance(self, seconds: float, busy: float) -> None:
        self.now += seconds
        self.wanted += seconds * busy


def pace(limit: int) -> tuple[Pace, Clock]:
    clock = Clock()
    return Pace(limit, clock=lambda: clock.now, demand=lambda: clock.wanted), clock


def test_a_busy_process_reads_one_cluster_at_a_time() -> None:
    p, clock = pace(4)
    for _ in range(20):
        clock.advance(WINDOW, busy=BUSY + 0.2)
        assert p.allowed() == 1


def test_a_waiting_process_admits_one_more_per_window_up_to_the_limit() -> None:
    p, clock = pace(3)
    assert p.allowed() == 1
    clock.advance(WINDOW / 2, busy=0.1)
    assert p.allowed() == 1  # not a whole window yet
    levels = []
    for _ in range(5):
        clock.advance(WINDOW, busy=0.1)
        levels.append(p.allowed())
    assert levels == [2, 3, 3, 3, 3]


def test_a_level_reached_stays_when_the_process_gets_busy() -> None:
    p, clock = pace(4)
    clock.advance(WINDOW, busy=0.2)
    assert p.allowed() == 2
    clock.advance(WINDOW, busy=1.0)
    assert p.allowed() == 2


def test_parallel_one_never_admits_a_second() -> None:
    p, clock = pace(1)
    clock.advance(WINDOW * 4, busy=0.0)
    assert p.allowed() == 1


def test_demand_counts_this_process_cpu() -> None:
    demand = Demand()
    before = demand()
    total = sum(i * i for i in range(200_000))  # some CPU work
    assert total > 0
    assert demand() > before
