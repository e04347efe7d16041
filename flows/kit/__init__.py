"""The pipeline kit's generator: ``paperline new`` and its templates (the kit's building blocks live in
``flows.specs`` (Layout), ``flows.runtime.params`` (PaperParams, presets), ``components.evaluation.claim_spec``
(ClaimSpec) and ``flows.runtime.report_stage`` (finish_report))."""
