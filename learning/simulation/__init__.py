"""A traffic simulator for demos, fixtures and the learning cycles' known-answer tests.

``world`` is the pure generative core: outputs with a hidden true quality, validators and
reviewers whose predictiveness is known, and model drift. No ORM, no Django.
"""
