"""OFMU pipeline: bi-level unlearning vs GA, GradDiff and NPO on a synthetic TOFU and sklearn digits."""
