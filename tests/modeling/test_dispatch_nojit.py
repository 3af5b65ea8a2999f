"""The dispatch kernels as plain Python (``NUMBA_DISABLE_JIT=1``): small solves that run every line of them.

``make test`` runs this module in a process of its own with the JIT off (``make test-kernels``); in
the compiled run it is skipped. The solves below were chosen (a seeded search over engines, help
rules, bursts, background load, think time and load, keeping each case that ran a kernel line no
earlier case had) so that together with the direct calls of :func:`_guards` they run every statement
of every compiled function of :mod:`kneecap.modeling.dispatch`, which
:func:`test_every_kernel_statement_runs_as_python` checks line by line with the interpreter's own
tracer. A kernel line that no solve reaches, or that fails as Python, fails ``make test``; the
full suite without JIT (``make test-nojit``, minutes) stays for debugging.
"""

from __future__ import annotations

import ast
import math
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from kneecap.modeling import dispatch
from kneecap.modeling.dispatch import (
    Dispatch,
    _closed,
    _closed_help,
    _help_cycle,
    _open_queues,
    _pool_rule,
    _queues,
    solve_closed,
    solve_open,
    solve_open_rows,
)
from kneecap.modeling.dispatch._memo import new_memo
from kneecap.modeling.dispatch._rules import Rules, rules_of

pytestmark = pytest.mark.skipif(not numba.config.DISABLE_JIT, reason="the kernels as Python: NUMBA_DISABLE_JIT=1 "
                                "(make test-kernels)")

PACKAGE = Path(dispatch.__file__).parent

#: (kind, help rule, IIPHONORPRIORITY, GCPs, zIIPs, eligible bursts, GCP bursts, ZIIPAWMT ms,
#: other classes' busy % per GCP and per zIIP, eligible share, CPU ms, delay ms, think ms, knee
#: stop ratio, then clients (closed) or the top load as a share of the LPAR's capacity (open, rows))
CASES = [
    ('rows', 'pool', True, 4, 1, 8, 3, 1000000.0, 50.0, 0.0, 1.0, 0.8, 0.0, 200.0, 3.0, 0.9),
    ('open', 'burst', True, 1, 5, 1, 2, 0.0, 0.0, 0.0, 0.05, 2.0, 0.0, 200.0, 0.0, 1.5),
    ('closed', 'pool', True, 4, 5, 2, 2, 0.5, 0.0, 70.0, 0.7, 0.1, 0.3, 0.0, 0.0, 27),
    ('closed', 'burst', True, 1, 5, 4, 2, 10.0, 50.0, 70.0, 0.3, 0.1, 0.3, 0.0, 3.0, 16),
    ('closed', 'burst', True, 8, 1, 1, 1, 10.0, 50.0, 30.0, 0.5, 2.0, 0.0, 200.0, 0.0, 400),
    ('rows', 'burst', True, 1, 3, 2, 1, 0.5, 80.0, 0.0, 0.5, 2.0, 0.3, 20.0, 3.0, 1.5),
    ('rows', 'pool', True, 8, 5, 2, 1, 3.2, 0.0, 70.0, 0.7, 2.0, 5.0, 0.0, 3.0, 1.5),
    ('closed', 'pool', False, 4, 0, 1, 2, 0.5, 20.0, 0.0, 1.0, 2.0, 0.0, 20.0, 3.0, 40),
    ('closed', 'pool', True, 2, 1, 8, 2, 3.2, 50.0, 0.0, 1.0, 0.8, 0.3, 20.0, 3.0, 110),
    ('rows', 'pool', True, 2, 5, 1, 1, 10.0, 50.0, 0.0, 0.5, 0.1, 5.0, 200.0, 3.0, 1.5),
    ('closed', 'burst', True, 8, 3, 2, 1, 1000000.0, 0.0, 0.0, 0.95, 0.1, 0.0, 0.0, 3.0, 49),
    ('closed', 'burst', True, 1, 3, 4, 1, 10.0, 50.0, 0.0, 0.3, 2.0, 0.0, 20.0, 0.0, 12),
    ('closed', 'burst', True, 2, 0, 8, 3, 3.2, 50.0, 0.0, 1.0, 0.1, 0.3, 200.0, 0.0, 400),
    ('rows', 'burst', False, 4, 5, 4, 1, 3.2, 0.0, 30.0, 0.3, 0.8, 0.0, 20.0, 0.0, 0.9),
    ('closed', 'pool', True, 1, 5, 4, 2, 3.2, 80.0, 70.0, 0.95, 2.0, 0.0, 0.0, 3.0, 10),
    ('closed', 'burst', False, 1, 2, 8, 3, 0.0, 20.0, 30.0, 0.95, 0.8, 5.0, 0.0, 0.0, 47),
    ('closed', 'pool', True, 2, 2, 1, 1, 0.5, 50.0, 30.0, 0.5, 0.1, 0.0, 0.0, 0.0, 10),
    ('closed', 'pool', True, 2, 3, 1, 3, 0.0, 0.0, 0.0, 0.5, 2.0, 0.0, 20.0, 0.0, 93),
    ('open', 'pool', False, 1, 1, 2, 1, 10.0, 50.0, 30.0, 0.95, 2.0, 5.0, 20.0, 3.0, 1.5),
    ('closed', 'burst', True, 1, 0, 4, 1, 1000000.0, 80.0, 0.0, 1.0, 0.8, 0.0, 0.0, 0.0, 10),
    ('closed', 'pool', True, 8, 2, 1, 1, 3.2, 0.0, 30.0, 0.95, 2.0, 5.0, 200.0, 3.0, 400),
    ('closed', 'burst', False, 1, 1, 2, 3, 0.0, 0.0, 70.0, 1.0, 0.8, 0.3, 200.0, 0.0, 306),
    ('closed', 'pool', True, 8, 1, 8, 1, 3.2, 80.0, 0.0, 0.5, 0.8, 0.3, 20.0, 0.0, 279),
    ('closed', 'pool', True, 1, 5, 2, 3, 0.5, 80.0, 0.0, 1.0, 0.1, 0.3, 0.0, 0.0, 88),
    ('closed', 'pool', True, 8, 5, 4, 2, 10.0, 80.0, 70.0, 0.7, 0.8, 5.0, 200.0, 3.0, 400),
    ('open', 'pool', True, 8, 1, 8, 2, 0.5, 50.0, 70.0, 0.5, 0.8, 5.0, 200.0, 0.0, 0.9),
    ('closed', 'pool', True, 1, 5, 2, 1, 3.2, 95.0, 99.0, 0.5, 0.01, 5.0, 200.0, 3.0, 400),
    ('open', 'pool', True, 4, 8, 1, 1, 10.0, 80.0, 30.0, 1.0, 0.01, 0.3, 20.0, 3.0, 1.5),
    ('closed', 'burst', True, 1, 2, 1, 2, 3.2, 20.0, 30.0, 0.3, 0.01, 0.3, 0.0, 0.0, 75),
]


def _solve(case: tuple) -> None:
    kind, rule, honor, n_g, n_z, k_e, k_g, tau, bg_g, bg_z, f, d, r0, z, stop, last = case
    lpar = Dispatch(n_g, n_z, honor_priority=honor, help_rule=rule, help_wait_ms=tau, eligible_bursts=k_e,
                    gcp_bursts=k_g, bg_gcp_busy_pct=bg_g, bg_ziip_busy_pct=bg_z)
    if kind == "closed":
        sol = solve_closed(np.array([d]), np.array([r0]), f, lpar, think_time_ms=z, n_max=int(last), stop_ratio=stop)
        ns = np.arange(1, sol.resp_ms.shape[1] + 1)
        ok = np.isfinite(sol.resp_ms[0]) & np.isfinite(sol.tps[0])
        # Little's law over the whole loop: N = X (R + Z), wherever the population was solved
        np.testing.assert_allclose(sol.tps[0, ok] / 1000.0 * (sol.resp_ms[0, ok] + z), ns[ok], rtol=1e-6)
        assert ok[0] and (sol.resp_ms[0, ok] >= r0 + d - 1e-9).all()
        return
    top = last * lpar.max_tps(d, f)
    if kind == "open":
        sol = solve_open(np.linspace(0.0, top, 10), np.array([d]), np.array([r0]), f, lpar)
        floor = r0 + d
    else:  # each interval on its own LPAR state, as an RMF history has them
        n_gcp = np.array([n_g, max(1, n_g - 1), n_g, n_g + 1, n_g, 1])
        n_ziip = np.array([n_z, n_z, 0, n_z + 1, n_z, n_z])
        sol = solve_open_rows(np.linspace(0.0, top, 6), d, f, n_gcp=n_gcp, n_ziip=n_ziip,
                              bg_gcp_busy_pct=np.full(6, bg_g), bg_ziip_busy_pct=np.where(n_ziip > 0, bg_z, 0.0),
                              dispatch=lpar)
        floor = d
    finite = np.isfinite(sol.resp_ms[0])
    # equal-speed engines: a transaction's residence is its CPU time and its waits; inf only saturated
    assert finite[0] and (sol.resp_ms[0, finite] >= floor - 1e-9).all()
    assert (sol.saturated[0] | finite).all()


def _guards() -> None:
    """Branches the solves reach only at a boundary they never land on, each with what it answers."""
    assert _closed._mva_residual_excess(np.array([0.5, 0.3, 0.2]), 2, 0.5, 1.0, 1.0) == 0.0  # exponential: none
    out = np.zeros((2, 4))
    _closed._blank_past(out, np.array([2, 4]), 4)
    assert np.isnan(out[0, 2:]).all() and not np.isnan(out[0, :2]).any() and not np.isnan(out[1]).any()
    assert _help_cycle.cycle_weight(1.0, 3.2, 0.0) == 0.0
    assert _help_cycle._help_cycle_wait(1.0, 0.1, 0, 1.0, 1.0, 0.1, 3.2) == (np.inf, 0.0)
    memo = new_memo()
    # one eligible and one GCP-only burst on 2 GCPs + 1 zIIP, pool help after 3.2 ms, no other classes
    lone = Rules(k_e=1, k_g=1, n_g=2, n_z=1, honor=True, tau=3.2, pool=True, bg_g=0.0, bg_z=0.0, bg_s=0.2, rho=1.0)
    assert _help_cycle._highest_residence_below_least(0.8, 0.0, lone, 1.0, memo) == 0.0
    memo.cycle[0] = 0.1  # the least-wait rate below the zIIPs' capacity: an empty range
    assert _help_cycle._highest_residence_below_least(0.8, 0.95, lone, 1.0, memo) == 0.0
    rules = rules_of(Dispatch(2, 1))
    assert _open_queues.queue_residence(1.0, 0.0, 0.95, rules, new_memo()) == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert _pool_rule.pool_rule_wait(0.0, 0.5, 2, 3.2, 1.0, 1.2, 0.6, 0.05) == 0.0
    assert _pool_rule.pool_rule_wait(3.0, 0.5, 2, 3.2, 0.5, 1.2, 0.6, 0.05) > 0.0
    assert _queues.residual_ratio(0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0) == 1.0
    assert _queues.residual_ratio(1.0, 0.1, 1.0, 0.5, 0.0, 0.1, 5.0) == 1.0  # every burst rejoins: no excess
    # no zIIP online, zIIPs 2.5x a GCP's speed: the eligible 0.4 ms (zIIP time) take 1.0 ms on a GCP
    slow = _closed_help.closed_class(0.8, 0.5, lone._replace(n_z=0, rho=2.5))
    assert (slow.d, slow.f, slow.rules.rho, slow.rules.n_z) == (1.4, 1.0 / 1.4, 1.0, 0)
    cls = _closed_help.closed_class(0.8, 0.95, rules)
    assert _closed_help.ziip_wait_beside_background(1e-15, 0.7, cls, new_memo()) == (cls.s, 0.0, 0.0, 0.7)
    assert _queues.wait_ratio_beside_background(2, 0.5, 0.1, 1.0, 0.1, 0, 1.0, 0.1) == 1.0
    # honor NO beside other classes' zIIP work, the open queue full at the population before's
    # throughput: the closed network's own (finite) wait times the pool
    cls = _closed_help.closed_class(0.8, 1.0, rules_of(Dispatch(2, 1, honor_priority=False, bg_ziip_busy_pct=50.0)))
    mva = _closed.new_mva_states(1)[0]
    _closed._empty_network(mva, 2, 1)
    assert _closed_help.ziip_wait_beside_background(1.0, 1.0, cls, new_memo())[2] == np.inf
    spill, t_z, _, ziip_open, _, _ = _closed._ziip_time(cls, mva.p, mva.q, 1.0, 0.0, 1.0, new_memo())
    assert ziip_open and spill == 0.0 and t_z == cls.ke * cls.s  # no population queued yet: no wait
    # the queue's mean through points that never reach zero (the caller's points always do): a constant 1
    assert _help_cycle._rounded_queue_mean(np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0]), 2) == 1.0
    # the eligible load a rounding above the zIIPs' capacity (a_E > c_Z while lam = mu / k_E): no cycle
    s, ke, c_z = 0.3, 2, 0.7
    lam = c_z / s / ke
    assert lam * ke * s > c_z and lam - c_z / s / ke <= 0.0
    assert _help_cycle._help_cycle_wait(lam, s, ke, c_z, 1.0, 0.0, 3.2) == (np.inf, 0.0)
    # past the last node of the least-waits table, the cycle's own waits where they are higher
    memo = new_memo()
    memo.cycle[:] = (0.1, 0.0, 0.0)
    memo.cycle_table[:] = 0.0
    cyc = _help_cycle.Cycle(s=0.5, ke=2, kg=1, c_z=1.0, n_g=4, d_n=0.2, a_bg_g=0.0, bg_s=0.2, tau=3.2, rho=1.0)
    own = _help_cycle.help_cycle_waits(1.5, cyc)
    assert _help_cycle.monotone_cycle_waits(1.5, cyc, memo) == own[:3]
    assert math.isfinite(own[0]) and own[0] + own[1] > 0.0
    # and the last node's where those are higher: the total never falls with load
    memo.cycle[1:3] = (50.0, 1.0)
    assert _help_cycle.monotone_cycle_waits(1.5, cyc, memo) == (50.0, 1.0, own[2])


def _kernel_statements() -> dict[str, set[int]]:
    """Per module of the package, the lines of the statements in its compiled functions (docstrings left out)."""
    found: dict[str, set[int]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list):
                body = node.body[1:] if isinstance(node.body[0], ast.Expr) and isinstance(
                    node.body[0].value, ast.Constant) else node.body
                found.setdefault(str(path), set()).update(s.lineno for top in body for s in ast.walk(top)
                                                           if isinstance(s, ast.stmt))
    return found


@pytest.mark.parametrize("case", CASES)
def test_the_small_solves_keep_littles_law_and_their_cpu_floor(case):
    # compiled kernels raise no floating-point warnings; numpy scalars in Python do (a NaN compared)
    with np.errstate(all="ignore"):
        _solve(case)


def test_the_guards_answer_as_documented():
    with np.errstate(all="ignore"):
        _guards()


def test_every_kernel_statement_runs_as_python():
    ran: dict[str, set[int]] = {}

    def calls(frame, event, arg):
        if not frame.f_code.co_filename.startswith(str(PACKAGE)):
            return None
        lines = ran.setdefault(frame.f_code.co_filename, set())

        def each_line(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return each_line
        return each_line

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        with np.errstate(all="ignore"):
            for case in CASES:
                _solve(case)
            _guards()
    finally:
        sys.settrace(previous)
    statements = _kernel_statements()
    assert sum(map(len, statements.values())) > 800  # the check sees the kernels
    missed = [f"{Path(path).name}:{line}" for path, lines in statements.items()
              for line in sorted(lines - ran.get(path, set()))]
    assert not missed, f"kernel lines no case runs (add a case or a guard call): {missed}"
