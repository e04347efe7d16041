"""models components."""
