"""VIP (variance-informed predictive rollout allocation): arithmetic task, prompt features, GP success
predictor, variance-minimising allocator, and the allocation strategies compared in the pipeline."""
