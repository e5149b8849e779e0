"""The claim's SQL at the database alone, for every reviewer of an existing database: what a
long review history costs each claim.

For each user who may review, the queryset that ``gating.reviews.item_claim`` builds (the
claimable items, oldest first, with the related rows, ``FOR UPDATE SKIP LOCKED``) runs
under ``EXPLAIN (ANALYZE, BUFFERS)`` ``--repeat`` times in a transaction that is rolled
back, at ``--at`` (default: now). Meant for a database that a load left behind, such as
``bench.dashboard --keep-db``'s; it writes nothing.

Output: one JSON object on stdout, per reviewer: reviews made, whether they may
adjudicate, the execution times in ms, and whether the plan hashed a subplan.

    .venv/bin/python -m bench.claim_plan --db-name gatehouse_bench_dashboard [--at ISO]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import datetime

from bench.harness import app_env


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db-name", required=True)
    p.add_argument("--at", type=datetime.fromisoformat, help="the claim's time (ISO 8601)")
    p.add_argument("--repeat", type=int, default=3)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.update(app_env(args.db_name))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from gating import reviews
    from gating.models import Review, ReviewItem

    at = args.at or timezone.now()
    result = {}
    for user in get_user_model().objects.order_by("pk"):
        if not user.has_perm("gating.review_items"):
            continue
        with transaction.atomic():
            claim = (
                reviews.claimable_items(ReviewItem.objects.all(), reviewer=user, now=at)
                .select_related(*reviews.CLAIM_RELATED)
                .select_for_update(skip_locked=True, of=("self",))[:1]
            )
            sql, params = claim.query.sql_with_params()
            took, hashed = [], False
            with connection.cursor() as cursor:
                for _ in range(args.repeat):
                    cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                    plan = "\n".join(row[0] for row in cursor.fetchall())
                    took.append(float(re.search(r"Execution Time: ([\d.]+) ms", plan)[1]))
                    hashed = hashed or "hashed SubPlan" in plan
            transaction.set_rollback(True)
        result[user.username] = {
            "reviews": Review.objects.filter(reviewer=user).count(),
            "may_adjudicate": user.has_perm("gating.adjudicate_items"),
            "execution_ms": took,
            "hashed_subplan": hashed,
        }
    json.dump({"db": args.db_name, "at": at.isoformat(), "reviewers": result}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
