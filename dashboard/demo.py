"""The demo that the run command opens: accounts, a gateway token and simulated traffic."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model

from dashboard import rollups
from gating import rubrics, services
from gating.models import TaskType
from gating.roles import Role
from learning import cycles
from simulator import run, world

DEMO_ROLES = {"admin": Role.ADMIN, "lead": Role.LEAD, "reviewer": Role.REVIEWER}
DEMO_GATEWAY = "gateway"


@dataclass(frozen=True)
class DemoCredentials:
    passwords: dict[str, str]
    gateway_token: str

    def as_text(self, base_url: str) -> str:
        lines = [f"Gatehouse demo at {base_url}", ""]
        lines += [f"  {name:<9} password {pw}" for name, pw in self.passwords.items()]
        lines += ["", f"  gateway API token: {self.gateway_token}"]
        return "\n".join(lines)


def demo_needed() -> bool:
    """The demo seeds only an empty database; one with any user is left alone."""
    return not get_user_model().objects.exists()


def demo_accounts_create() -> DemoCredentials:
    passwords = {}
    for username, role in DEMO_ROLES.items():
        passwords[username] = secrets.token_urlsafe(9)
        services.user_create(username=username, role=role, password=passwords[username])
    gateway = services.user_create(username=DEMO_GATEWAY, role=Role.GATEWAY)
    _, token = services.api_token_create(user=gateway, name="demo")
    return DemoCredentials(passwords=passwords, gateway_token=token)


def credentials_save(credentials: DemoCredentials, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"passwords": credentials.passwords, "token": credentials.gateway_token})
    )
    path.chmod(0o600)


def credentials_load(path: Path) -> DemoCredentials | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return DemoCredentials(passwords=data["passwords"], gateway_token=data["token"])


DEMO_DAYS = 14
# A team the size of the simulated one (four reviewers, a working day of 09:00-18:00, at the
# simulator's 12 decisions an hour) keeps up with what is held at this
# volume, with capacity left for audits; at 2,000 a day it left about 10,000 items open.
DEMO_OUTPUTS_PER_DAY = 600
DEMO_REVIEWS_PER_HOUR = run.DEFAULT_REVIEWS_PER_HOUR
# The demo's team works every day, 09:00-18:00: the thresholds runs then see the same
# history whatever weekday make run is started on. With weekends off, the demo's state did
# depend on it: of four start moments in one week, two ended with a threshold certified,
# one with none certified or estimated (docs/simulation.md).
DEMO_WORKING_DAYS = frozenset(range(7))
# Three of the four simulated reviewers are leads, so that every disagreement has a lead
# who took no part in it to adjudicate it (with one, half of them waited for good).
DEMO_LEADS = 3


def _learn_at_day_end(moment) -> None:
    """Every learning cycle at each simulated midnight, so that the demo has threshold,
    weight, tier and alert history as if it had been live. Once a day rather than on the
    cycles' own schedule (which ``simulate`` follows) keeps the seeding within a minute."""
    if moment.hour == 0 and moment.minute == 0:
        cycles.cycles_run_due(moment)


def demo_config(
    *, days: int = DEMO_DAYS, outputs_per_day: int = DEMO_OUTPUTS_PER_DAY, until: datetime
) -> world.SimulationConfig:
    """Weeks of simulated traffic whose last day is ``until``'s, with one model drifting
    in the last days. The agent task types are in it, so that the calibration page can
    compare the scorers that read evidence and provenance on the same outputs."""
    return world.SimulationConfig(
        seed=1,
        days=days,
        outputs_per_day=outputs_per_day,
        start=until.date() - timedelta(days=days - 1),
        task_types=world.DEFAULT_TASK_TYPES + world.AGENT_TASK_TYPES,
        drift=world.Drift(model="gpt-x", day=max(days - 3, 0), severity=0.6),
    )


# The scorer each agent task type is set to, as an admin would choose it (docs/scoring.md):
# evidence_quality follows the requirements of a locate or a CI question, evidence_categories
# weighs an explanation's breadth of evidence, and a claim's worth is in its provenance.
DEMO_SCORERS = {
    "code_locate": "evidence_quality",
    "code_explain": "evidence_categories",
    "ci_status": "evidence_quality",
    "claim_check": "interval",
}


# Budgets and an audit budget an admin would choose for two low-stakes task types, so that
# within the demo's two weeks the thresholds page shows the learning at work on them:
# audits raised, and a certification (classify's). The other task types keep
# the defaults (P(bad) <= 1 %, P(edit or bad) <= 5 %, audits up to 25 %), which two weeks
# at this volume cannot certify; the thresholds page says, per task type, what each lacks.
DEMO_BUDGETS = {
    "classify": {"alpha_approve": 0.2, "alpha_bad": 0.05, "audit_rate_budget": 0.8},
    "summarize": {"alpha_approve": 0.12, "alpha_bad": 0.03, "audit_rate_budget": 0.6},
}


# What reviewers of two task types score beside their verdict, so that the reviewers page can
# show how far two reviewers of one output agree on each dimension, and how the scores fall.
# One dimension of each kind: a 1-5 scale, a choice (optional, as a remark is), a yes or no.
DEMO_RUBRIC_DIMENSIONS = [
    {
        "name": "helpfulness",
        "label": "Helpfulness",
        "kind": "numeric",
        "required": True,
        "help": "1: of no use to the reader; 5: answers all they needed.",
        "minimum": 1,
        "maximum": 5,
    },
    {
        "name": "tone",
        "label": "Tone",
        "kind": "categorical",
        "required": False,
        "help": "Only if the tone is worth a remark.",
        "choices": ["neutral", "too casual", "too formal"],
    },
    {
        "name": "cites_sources",
        "label": "Cites its sources",
        "kind": "boolean",
        "required": True,
        "help": "Every claim can be traced to the input.",
    },
]
DEMO_RUBRICS = {
    "summarize": "Score the summary against the **source** it was given, not against what "
    "you know of the subject.",
    "draft_reply": "Score the reply as the customer would read it: does it answer what they "
    "asked, in a tone they would welcome?",
}


def demo_traffic_seed(
    config: world.SimulationConfig, *, until: datetime, on_progress=None
) -> run.SimulationReport:
    """Replay ``config`` up to ``until`` (the present): the demo opens with traffic up to the
    last hour and nothing stored in the future. The agent task types are made first, each
    with its scorer (``DEMO_SCORERS``), and the others score them in shadow; two task types
    get the budgets of ``DEMO_BUDGETS``, and two the rubrics of ``DEMO_RUBRICS``."""
    names = {t.name for t in config.task_types}
    choices = [
        (name, {"scorer": scorer}, "The demo's choice of scorer for an agent task type.")
        for name, scorer in DEMO_SCORERS.items()
    ] + [
        (name, budgets, "The demo's budgets for a low-stakes task type.")
        for name, budgets in DEMO_BUDGETS.items()
    ]
    for name, changes, reason in choices:
        if name in names:
            # Through the settings service, as an admin's choice is: audited, and the
            # gate's cached settings cleared.
            services.gate_settings_change(
                task_type=TaskType.objects.get_or_create(name=name)[0],
                changes=changes,
                actor=None,
                reason=reason,
                source=services.EditSource.API,
            )
    for name, instructions in DEMO_RUBRICS.items():
        if name in names:
            # Through the rubric service, as an admin's edit is: versioned and audited.
            rubrics.rubric_save(
                task_type=TaskType.objects.get_or_create(name=name)[0],
                instructions=instructions,
                dimensions=DEMO_RUBRIC_DIMENSIONS,
                actor=None,
            )
    return run.simulation_run(
        config,
        reviews_per_hour=DEMO_REVIEWS_PER_HOUR,
        leads=DEMO_LEADS,
        working_days=DEMO_WORKING_DAYS,
        # The last day's reviews are live claims; the history before it is recorded in bulk.
        live_days=1,
        on_progress=on_progress or (lambda n: None),
        on_hour_end=_learn_at_day_end,
        until=until,
    )


def demo_rollups_build(*, until: datetime, on_progress=None) -> int:
    """The dashboard's rollups over the seeded traffic, and the queue as it stood at each
    hour of it (beat's snapshots never saw the replay), so that the pages open with data.
    Returns how many hours were rolled up."""
    hours = rollups.rollups_rebuild(
        now=until, on_progress=on_progress or (lambda done, total: None)
    )
    rollups.queue_snapshots_backfill(until=until)
    rollups.queue_snapshot_take(until)
    return hours
