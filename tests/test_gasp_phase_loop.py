"""When a GASP teacher phase ends (Algorithm 1, App. D): M accepted or max_attempts spent,
attempts counted as generation rounds or as candidates, and what a short phase does."""

import pytest

from selfplay.tracks.gasp.phase_loop import PhaseLoop, ShortPhase


def run(loop, accepted_per_round):
    """Drive ``loop`` with the given acceptances per round; the batch sizes it asked for."""
    sizes = []
    rounds = iter(accepted_per_round)
    while not loop.done:
        size = loop.next_batch_size()
        sizes.append(size)
        loop.record(size, min(next(rounds), size))
    return sizes


def test_target_reached_ends_the_phase_before_attempts_are_spent():
    loop = PhaseLoop(target=5, max_attempts=10, count="generations", per_attempt=4)
    assert loop.ended is None and not loop.done
    sizes = run(loop, [1, 3, 2, 9])
    assert sizes == [4, 4, 4]
    assert loop.ended == "target_reached" and loop.accepted == 6  # the last round overshoots M
    assert loop.summary() == {
        "attempts": 3,
        "candidates": 12,
        "accepted": 6,
        "target": 5,
        "ended": "target_reached",
    }


def test_generations_count_rounds_whatever_their_size():
    loop = PhaseLoop(target=100, max_attempts=3, count="generations", per_attempt=8)
    assert run(loop, [0, 1, 2, 50]) == [8, 8, 8]
    assert loop.ended == "attempts_spent" and (loop.attempts, loop.candidates, loop.accepted) == (3, 24, 3)


def test_candidates_count_candidates_and_cut_the_last_round():
    loop = PhaseLoop(target=100, max_attempts=10, count="candidates", per_attempt=4)
    assert run(loop, [0, 0, 0, 0]) == [4, 4, 2]
    assert loop.ended == "attempts_spent" and (loop.attempts, loop.candidates) == (3, 10)
    loop2 = PhaseLoop(target=100, max_attempts=10, count="candidates", per_attempt=4)
    loop2.record(4, 0)
    loop2.record(4, 0)
    with pytest.raises(ValueError, match="only 2 were left"):
        loop2.record(3, 0)


def test_target_reached_on_the_last_attempt_counts_as_reached():
    loop = PhaseLoop(target=2, max_attempts=2, per_attempt=1)
    run(loop, [1, 1])
    assert loop.spent and loop.ended == "target_reached"


def test_a_finished_loop_refuses_more_rounds_and_bad_counts():
    loop = PhaseLoop(target=1, max_attempts=5, per_attempt=2)
    with pytest.raises(ValueError):
        loop.record(2, 3)
    with pytest.raises(ValueError):
        loop.record(-1, 0)
    loop.record(2, 1)
    assert loop.done
    with pytest.raises(RuntimeError):
        loop.next_batch_size()
    with pytest.raises(RuntimeError):
        loop.record(2, 0)
    with pytest.raises(ValueError, match="never end"):
        PhaseLoop(target=1, max_attempts=5, count="candidates", per_attempt=2).record(0, 0)


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"target": 0, "max_attempts": 1}, "target"),
        ({"target": 1, "max_attempts": 0}, "max_attempts"),
        ({"target": 1, "max_attempts": 1, "per_attempt": 0}, "per_attempt"),
        ({"target": 1, "max_attempts": 1, "count": "rounds"}, "count"),
        ({"target": True, "max_attempts": 1}, "target"),
    ],
)
def test_settings_are_checked(kwargs, key):
    with pytest.raises(ValueError, match=f"^{key}:"):
        PhaseLoop(**kwargs)


def test_short_phase_updates_by_default_and_skips_when_asked():
    short = PhaseLoop(target=3, max_attempts=1, per_attempt=2)
    run(short, [2])
    full = PhaseLoop(target=1, max_attempts=1, per_attempt=2)
    run(full, [1])
    assert ShortPhase().on_short == "update"
    assert ShortPhase().updates(short) and ShortPhase().updates(full)
    assert not ShortPhase("skip").updates(short) and ShortPhase("skip").updates(full)
    with pytest.raises(RuntimeError):
        ShortPhase().updates(PhaseLoop(target=1, max_attempts=1))
    with pytest.raises(ValueError, match="on_short"):
        ShortPhase("drop")
