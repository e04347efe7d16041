"""GoT-R1 at mini scale: a palette-token world, a rule planner, a renderer and a component-detector checker,
rule stand-ins for the MLLM reward judges in the paper's product form, and a chain-then-image decoder trained
by SFT and by GRPO (``components.rl_text``)."""
