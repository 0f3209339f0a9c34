"""Stage 5, routing: which skill a request selects. `policy` holds what every scorer shares
(SelectionPolicy, SkillMatch, the ranking); `scorer` the `Scorer` interface and the table of
scorers by name; one module per scorer; routing tests (`queries`) and their evaluation.
Imports stages 0-4."""
