"""Helpers the vip stages share."""

from __future__ import annotations

import logging

log = logging.getLogger("paperline")
