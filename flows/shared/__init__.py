"""Shared data stages that several papers read (the offline English sources)."""
