"""bench/learning_quality.py run in parts and joined: the claims recomputed over all the
parts' histories, and parts that are not one run refused."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from bench import learning_quality
from simulator import loop

DELTA = loop.LoopSettings().budgets.delta
ROOT = Path(learning_quality.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def histories() -> list[dict]:
    with warnings.catch_warnings():
        # Two days of 600 outputs are too few for the true-label logistic model to give
        # every validator a positive coefficient, so some weight ratios are infinite. What
        # is tested here is the join, not the figures.
        warnings.simplefilter("ignore", RuntimeWarning)
        return [
            learning_quality.one(kind, seed, 2, 600, 300)
            for kind, seed in (("default", 1), ("default", 2), ("perfect", 1))
        ]


def part(histories, *, code="0" * 40, days=2, seconds=1.5, commit="a" * 40):
    return {
        "bench": "learning_quality",
        "command": "python -m bench.learning_quality …",
        "days": days,
        "outputs_per_day": 600,
        "reviews_per_day": 300,
        "code": code,
        "commit": commit,
        "seconds": seconds,
        "histories": histories,
    }


def test_parts_join_into_one_run_of_all_their_histories(histories):
    joined = learning_quality.merged(
        [part(histories[:1]), part(histories[1:], seconds=2.0, commit="b" * 40)]
    )
    assert joined["histories"] == histories
    assert joined["claims"] == learning_quality.summary(histories, DELTA)
    assert joined["claims"]["default"]["histories"] == 2
    assert joined["seconds"] == 3.5
    assert joined["code"] == "0" * 40
    # Commits that differ only outside the measured paths join; each part's is kept.
    assert joined["commit"] == ["a" * 40, "b" * 40]


@pytest.mark.parametrize(
    ("second", "words"),
    [
        ({"days": 3}, "the parts differ in days"),
        ({"code": "1" * 40}, "the parts differ in code"),
    ],
)
def test_parts_of_other_settings_or_code_are_refused(histories, second, words):
    with pytest.raises(ValueError, match=words):
        learning_quality.merged([part(histories[:1]), part(histories[1:], **second)])


@pytest.mark.parametrize("code", [None, "0" * 40 + "+changes"])
def test_parts_of_uncommitted_code_are_refused(histories, code):
    with pytest.raises(ValueError, match="records no code version, or uncommitted code"):
        learning_quality.merged([part(histories[:1], code=code), part(histories[1:], code=code)])


def test_a_history_in_two_parts_is_refused(histories):
    with pytest.raises(ValueError, match="history default 2 is in two parts"):
        learning_quality.merged([part(histories[:2]), part(histories[1:])])


def test_the_code_version_is_that_of_the_measured_paths_alone(monkeypatch):
    asked = {}

    def git_state(*paths, untracked):
        asked["paths"] = paths
        return "c" * 40, changed

    def git_objects(*revisions):
        asked["revisions"] = revisions
        return [trees.get(r, "0" * 40) for r in revisions]

    monkeypatch.setattr(learning_quality.harness, "git_state", git_state)
    monkeypatch.setattr(learning_quality.harness, "git_objects", git_objects)
    changed, trees = [], {}
    before = learning_quality.code_version()
    assert asked["paths"] == learning_quality.MEASURED_PATHS

    trees["HEAD:docs"] = "d" * 40  # not measured: the same version
    assert learning_quality.code_version() == before
    # Nor is the simulator's database replay, another bench or the queue: work there must
    # not orphan the parts of a run.
    measured = [r.removeprefix("HEAD:") for r in asked["revisions"]]
    for unmeasured in ("simulator/run.py", "bench/queue.py", "gating/reviews.py"):
        assert not [m for m in measured if unmeasured == m or unmeasured.startswith(m + "/")]
    trees["HEAD:learning/statistics"] = "e" * 40
    after = learning_quality.code_version()
    assert after != before and not after.endswith("+changes")
    changed.append("learning/statistics/certify.py")
    assert learning_quality.code_version() == after + "+changes"


def test_a_history_reads_no_project_code_outside_the_measured_paths():
    # In a fresh interpreter: this one has loaded the whole project for the test database.
    script = (
        "import json, sys, warnings\n"
        "from bench import learning_quality\n"
        "warnings.simplefilter('ignore', RuntimeWarning)\n"
        "learning_quality.one('default', 1, 2, 600, 300)\n"
        "print(json.dumps([getattr(m, '__file__', None) for m in list(sys.modules.values())]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    files = [Path(f).resolve() for f in json.loads(done.stdout.splitlines()[-1]) if f]
    project = [f.relative_to(ROOT) for f in files if f.is_relative_to(ROOT)]
    project = [f for f in project if f.parts[0] != ".venv"]
    assert any(f.parts[0] == "simulator" for f in project)
    uncovered = [
        str(f)
        for f in project
        if not any(
            f == Path(p) or f.is_relative_to(Path(p)) for p in learning_quality.MEASURED_PATHS
        )
    ]
    assert uncovered == []
