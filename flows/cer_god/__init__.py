"""CER-GOD pipeline: graphs, injection, detectors over seeds, evaluation, claims and report."""
