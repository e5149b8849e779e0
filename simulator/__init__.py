"""The simulated world beside the product: traffic with a hidden true quality, reviewers
whose habits are known, and the closed loop that proves the learning against that truth.

It sits above the product and is not part of it: the demo (``dashboard.demo``, ``manage.py
simulate``) and the benches use it; gating and learning never import it.

* ``world``: the pure generative core: outputs with a hidden true quality, validators and
  reviewers whose predictiveness is known, and model drift. No ORM, no Django.
* ``agents``: the agent task types' evidence and provenance.
* ``run``: replays the world through the real gate and review queue, into the database.
* ``loop``: the learning policy in a closed loop with the world, without the database.
* ``quality``: what the closed loop's histories claim, measured against the truth.
"""
