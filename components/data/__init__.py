"""data components."""
