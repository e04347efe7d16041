"""evaluation components."""
