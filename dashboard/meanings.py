"""What each chart and each word of the dashboard means, in one place: a chart's card shows its
title and meaning from here (dashboard.templatetags.dashboard_charts), and the help page
(/dashboard/help/) lists them all, with the gate's settings (gating.gate_settings) and the
terms the pages use."""

from __future__ import annotations

from dataclasses import dataclass

from learning.statistics.agreement import MIN_PAIRS


@dataclass(frozen=True)
class Meaning:
    title: str
    meaning: str


# Landis and Koch's (1977) words for a kappa: below 0 "poor"; then each band's upper end,
# included, and its word.
KAPPA_BANDS = (
    (0.2, "slight"),
    (0.4, "fair"),
    (0.6, "moderate"),
    (0.8, "substantial"),
    (1.0, "almost perfect"),
)


def kappa_words(kappa: float) -> str:
    """A kappa's band in words: 0.63 → "substantial", 0.6 → "moderate", -0.1 → "poor"."""
    if kappa < 0:
        return "poor"
    return next(word for upper, word in KAPPA_BANDS if kappa <= upper)


# Krippendorff (Content Analysis, 2004): an alpha from 0.8 is reliable, from 0.667 good
# enough for tentative conclusions, below that not.
ALPHA_RELIABLE = 0.8
ALPHA_TENTATIVE = 0.667


def alpha_words(alpha: float) -> str:
    """An alpha's band in words (Krippendorff): 0.85 → "reliable", 0.7 → "tentative"."""
    if alpha >= ALPHA_RELIABLE:
        return "reliable"
    if alpha >= ALPHA_TENTATIVE:
        return "tentative"
    return "not reliable"


# By chart id, in the order of the pages that show them.
CHARTS: dict[str, Meaning] = {
    "score-histogram": Meaning(
        "Scores by decision",
        "How many outputs scored each value, coloured by what the gate answered: held for "
        "review, delivered as a warning, or approved.",
    ),
    "queue-size": Meaning(
        "Queue size",
        "Items waiting for a reviewer at each hour's end. A line that keeps rising means "
        "outputs are held faster than they are reviewed.",
    ),
    "queue-age": Meaning(
        "Pending items by time waiting",
        "How long the items in the queue now have waited. Items far to the right are the "
        "backlog alert's concern.",
    ),
    "reviewer-decisions": Meaning(
        "Decisions per reviewer per day",
        "How many approvals, edits and rejections each reviewer sent a day.",
    ),
    "reviewer-times": Meaning(
        "Median decision time",
        "Half of each reviewer's decisions took less than this, from opening the item to "
        "sending the decision.",
    ),
    "psi": Meaning(
        "Score drift (PSI) per task type and model",
        "How far each day's scores have moved from the week before, per task type and "
        "model (the population stability index). Below 0.1 is steady; above 0.25 the scores "
        "have shifted and the model or its inputs have likely changed.",
    ),
    "model-scores": Meaning(
        "Mean score per model",
        "The average score of each model's outputs a day. A model whose line drops apart "
        "from the others is the one to look at.",
    ),
    "score-heatmap": Meaning(
        "Scores over time",
        "How many outputs scored each value each day: darker is more. A band that moves "
        "up or down is a shift in scores.",
    ),
    "approval-by-band": Meaning(
        "Approved unchanged by score band",
        "Of the outputs reviewers decided, the share they approved without an edit, per "
        "score band, a day. A band whose share falls means the score trusts it too much.",
    ),
    "threshold-history": Meaning(
        "Threshold history",
        "Where the review and approve thresholds stood over time, moved by an admin or by "
        "the learning cycles.",
    ),
    "reviewer-kappa": Meaning(
        "Agreement between reviewers (Cohen's kappa)",
        "How often each pair of reviewers agree beyond what chance would give: 1 is always, "
        "0 is chance. In Landis and Koch's words, up to 0 poor, to 0.2 slight, to 0.4 "
        "fair, to 0.6 moderate, to 0.8 substantial, above almost perfect.",
    ),
    "reviewer-alpha": Meaning(
        "Agreement of all reviewers (Krippendorff's alpha)",
        "How far all the reviewers agree beyond chance, over every output two or more "
        "decided: 1 is full agreement, 0 is chance; 0.8 or more is commonly taken as "
        "reliable, below 0.67 as not.",
    ),
    "rubric-agreement": Meaning(
        "Agreement per rubric dimension",
        "How far the two independent reviews of a double-reviewed output agree on each "
        "dimension of the task type's rubric: Cohen's kappa (κ) for a choice or a yes/no, "
        "Krippendorff's alpha (α, interval) for a number, which counts a near miss for "
        "less than a far one. 1 is full agreement, 0 is chance; α from 0.8 is reliable, "
        "below 0.667 not; κ reads in Landis and Koch's bands. With fewer than "
        f"{MIN_PAIRS} pairs there is no value.",
    ),
    "rubric-scores": Meaning(
        "Rubric scores",
        "Of each task type's reviews, the share that gave each score on each dimension of "
        "its rubric. Scores bunched at one end, or a task type apart from the others, are "
        "worth a look at the rubric's instructions.",
    ),
    "validator-importance": Meaning(
        "Importance and the weight the gate uses now",
        "How much worse the score would predict reviewers' decisions without each validator "
        "(its share of the drop in log loss), beside the weight the gate gives it. A "
        "validator with weight but no importance adds nothing to the score.",
    ),
    "validator-accuracy": Meaning(
        "Accuracy",
        "How often each validator's pass or fail agreed with the reviewers' decisions, at "
        "each validators cycle.",
    ),
    "validator-weights": Meaning(
        "Weight history",
        "The weight of each validator in the score over time, as the cycles or an admin "
        "set it. Only the weights' proportions count.",
    ),
    "calibration": Meaning(
        "Reliability diagram: reviewers' approval by score",
        "Of the reviewed outputs at each score, the share reviewers approved unchanged. A "
        "trustworthy score climbs steadily: more approvals at higher scores.",
    ),
    "score-by-action": Meaning(
        "Scores by the reviewer's decision",
        "The scores of the outputs reviewers approved, edited and rejected. The further "
        "apart the three, the better the score tells them apart.",
    ),
    "auroc": Meaning(
        "How well the score ranks outputs (AUROC) per task type and model",
        "The chance that an output reviewers approved scored above one they did not: 1 "
        "ranks perfectly, 0.5 is no better than a coin.",
    ),
    "scorers-vs-reviewers": Meaning(
        "How well each scorer ranks outputs, by the reviewers",
        "Each scorer's AUROC against the reviewers' first decisions, on the outputs it "
        "scored: the one in use and those scoring in shadow.",
    ),
    "scorers-vs-truth": Meaning(
        "How well each scorer ranks outputs, by the simulator's truth",
        "Each scorer's AUROC against what the simulated outputs truly were: only simulated "
        "traffic has a truth to read.",
    ),
}

# The words the pages use that a newcomer may not know, for the help page.
TERMS: dict[str, str] = {
    "Certified": "The thresholds cycle has shown, from audits, that the share of bad or "
    "needing-an-edit outputs above the approve threshold stays within its error budget, with "
    "the chance of being wrong at most δ.",
    "Underpowered": "Too few audits above the threshold to certify it: the last certified "
    "value, or the default, is kept, and audits rise within their budget.",
    "Not attainable": "No threshold meets the error budget: the threshold is held and its "
    "guarantee suspended until an admin decides.",
    "Error budget (α)": "The largest share of delivered outputs of a kind that may truly be "
    "bad, or need an edit, that a certified threshold allows.",
    "δ": "The chance that a certified bound is wrong; a threshold is certified with "
    "confidence 1 − δ.",
    "Effective audits": "Audits counted by what they tell: audits drawn at a low rate stand "
    "for more outputs each, and unequal weights make a sample worth fewer plain draws.",
    "Wilson interval": "The range a share most likely lies in, given how many were counted "
    "(95 % unless the page says otherwise).",
    "Reliability": "How often a reviewer's decisions match the most likely true label, "
    "estimated from every reviewer's decisions together (Dawid and Skene's model).",
    "PSI": "The population stability index: how far one day's scores have moved from the "
    "week before. Below 0.1 steady, 0.1 to 0.25 moving, above 0.25 shifted.",
    "AUROC": "The chance that an approved output scored above one that was not: 1 ranks "
    "perfectly, 0.5 is a coin.",
    "Guarded policy": "The cycles move a threshold only where its error bound stays within "
    "the budgets; ADR-0003's policy moves it by the rule as written.",
}
