from django.db import models


class SimulatedTruth(models.Model):
    """The hidden quality the simulator drew for one of its outputs.

    Kept in the learning app, apart from the output: the gate never imports this app, and
    no product page shows it. Learning evaluations and benchmarks read it to tell whether
    the gate got better.
    """

    class Truth(models.TextChoices):
        GOOD = "good", "Good"
        NEEDS_EDIT = "needs_edit", "Needs edit"
        BAD = "bad", "Bad"

    output = models.OneToOneField(
        "gating.Output", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    truth = models.CharField(max_length=20, choices=Truth.choices)
    seed = models.BigIntegerField()

    def __str__(self) -> str:
        return f"output {self.output_id}: {self.truth}"
