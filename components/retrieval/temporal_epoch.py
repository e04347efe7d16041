"""Day 0 of memory timestamps (days are floats since this moment)."""

import datetime as dt

EPOCH = dt.datetime(2025, 1, 6)  # a Monday
