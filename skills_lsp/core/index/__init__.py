"""Stage 4, index: skills as the engine sees them: adk-skill's `SkillDocument`, `SkillIndex` and
`load_skill_index` exactly, plus the workspace index over every layout and incremental updates.
Imports stages 0-2 (never the rules: the index reads skills leniently)."""
