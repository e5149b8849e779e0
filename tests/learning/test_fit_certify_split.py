"""Fitting and certifying on different outputs (learning.statistics.sampling.fit_certify_split):
the validator weights are fitted on a fixed share of the judged outputs, chosen by a hash of
each output's id, and the thresholds are certified on the rest, weighted for the part not
taken."""

from datetime import timedelta

import numpy as np
import pytest

from gating.models import Output, TaskType
from learning import cycles, evidence
from learning.statistics.sampling import fit_certify_split
from simulator import loop
from tests.learning.test_evidence_and_states import NOW, held_and_decided

# Knuth's multiplicative hash by hand: id x 2654435761, modulo 2**32, against 0.25 x 2**32
# = 1,073,741,824.
#   id 1: 2,654,435,761                          >= the cut: certifies
#   id 2: 5,308,871,522 - 4,294,967,296 = 1,013,904,226 < the cut: fits
#   id 3: 7,963,307,283 - 4,294,967,296 = 3,668,339,987: certifies
#   id 5: 13,272,178,805 - 3 x 4,294,967,296 = 387,276,917: fits


def test_a_quarter_fits_by_the_hash_worked_by_hand():
    split = fit_certify_split([1, 2, 3, 5], 0.25)
    assert split.fit.tolist() == [False, True, False, True]
    assert split.certify.tolist() == [True, False, True, False]


@pytest.mark.parametrize("ids", [np.arange(1, 40_001), np.arange(4, 160_001, 4)])
def test_the_part_is_its_share_of_consecutive_ids_and_of_every_fourth(ids):
    # Every fourth id: a rule such as id % 4 would put all of them in one part.
    split = fit_certify_split(ids, 0.25)
    assert not (split.fit & split.certify).any()
    assert (split.fit | split.certify).all()
    assert split.fit.mean() == pytest.approx(0.25, abs=0.005)


def test_share_zero_fits_and_certifies_on_every_output():
    split = fit_certify_split([1, 2, 3], 0.0)
    # Masks, as the evidence indexes with them.
    assert np.arange(3)[split.fit].tolist() == np.arange(3)[split.certify].tolist() == [0, 1, 2]


def test_an_id_that_hashes_onto_the_cut_certifies():
    # 2**30 x 2654435761 = 2**30 (mod 2**32), since 2654435761 = 1 (mod 4): exactly the
    # cut of a quarter, which is not below it.
    assert fit_certify_split([2**30], 0.25).certify.tolist() == [True]


def test_the_hash_is_exact_for_ids_past_a_float_s_precision():
    # 5,124,706,479 x 2654435761 = 2**30 - 1 (mod 2**32), worked with Python's integers:
    # just below the cut, so it fits. The product (1.4e19) is past 2**53, where a float
    # would round it.
    big = 5_124_706_479
    assert (big * 2654435761) % 2**32 == 2**30 - 1
    assert fit_certify_split([big], 0.25).fit.tolist() == [True]


@pytest.mark.parametrize("share", [1.0, -0.1, float("nan")])
def test_a_share_that_leaves_nothing_to_certify_or_is_no_share_is_refused(share):
    with pytest.raises(ValueError, match="fit_share"):
        fit_certify_split([1, 2], share)


@pytest.mark.django_db
def test_the_cycles_fit_on_one_part_and_certify_on_the_other(gateway, user_in, settings):
    settings.LEARNING_FIT_SHARE = 0.25
    held_and_decided(gateway, user_in("reviewer"), count=120)
    task_type = TaskType.objects.get(name="t")
    ids = np.array(sorted(Output.objects.values_list("pk", flat=True)))
    fits = {int(pk) for pk in ids if (int(pk) * 2654435761) % 2**32 < 2**30}
    assert 0 < len(fits) < len(ids)

    found = evidence.judged_evidence(
        since=NOW - timedelta(days=30), until=NOW, fit_share=settings.LEARNING_FIT_SHARE
    )
    window = found.window(task_type.pk)
    # Held and all reviewed: the certifying three quarters keep their weight, 1 each.
    assert len(window.scores) == len(ids) - len(fits)
    assert np.allclose(window.weights, 1.0)
    assert found.error_evidence(task_type.pk).verdicts == len(fits)

    # The validators cycle counts only the fitting part (and holds: fewer than 50).
    run = cycles.cycle_run("validators", NOW)
    assert run.changes == [
        {"task_type": "t", "held": f"{len(fits)} verdicts; the cycle needs 50 to reweight."}
    ]


def test_production_and_the_closed_loop_split_alike(settings):
    assert loop.LoopSettings().fit_share == settings.LEARNING_FIT_SHARE
