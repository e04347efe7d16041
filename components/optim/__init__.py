"""Online-to-nonconvex conversion (O2NC) optimisers, baselines, test functions and a counting runner
(numpy, float64)."""
