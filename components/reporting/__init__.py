"""Per-paper reports (Markdown + self-contained HTML), the cross-paper index, and plots.

Framework-free: flows call these from their report stage.
"""

from components.reporting.claims_doc import VERDICTS, check_claims_doc, load_claims_doc, summarize
from components.reporting.index import write_index
from components.reporting.paper_report import Section, write_paper_report
from components.reporting.plots import bar_plot, errorbar_plot, figure_to_png, line_plot

__all__ = [
    "VERDICTS",
    "Section",
    "bar_plot",
    "check_claims_doc",
    "errorbar_plot",
    "figure_to_png",
    "line_plot",
    "load_claims_doc",
    "summarize",
    "write_index",
    "write_paper_report",
]
