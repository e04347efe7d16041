"""Scaling-law fitting (Chinchilla approach 3), bootstrap CIs and compute-optimal allocation.

Framework-free: NumPy, SciPy and pandas only.
"""

from components.scaling.allocation import compute_optimal, crossing_compute, optimal_loss, tokens_per_param
from components.scaling.bootstrap import BootstrapFits, bootstrap_fits
from components.scaling.chinchilla import ScalingFit, default_grid, fit_chinchilla
from components.scaling.table import ScalingTable, load_scaling_table

__all__ = [
    "BootstrapFits",
    "ScalingFit",
    "ScalingTable",
    "bootstrap_fits",
    "compute_optimal",
    "crossing_compute",
    "default_grid",
    "fit_chinchilla",
    "load_scaling_table",
    "optimal_loss",
    "tokens_per_param",
]
