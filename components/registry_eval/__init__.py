"""Framework-free helpers of the recurring evaluation: re-evaluating a model, comparing with accepted values."""
