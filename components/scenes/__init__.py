"""Procedural 2D scenes with people (forest, urban, aerial): ground textures, trunks, foliage occluders,
articulated figures in three poses, per-person full-body and visible boxes and visibility bins, and
sequences with camera jitter. Framework-free; ForestPersons, Self-Aug and GoT-R1 reuse it."""
