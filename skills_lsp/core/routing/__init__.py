"""Stage 5, routing: which skill a request selects. `scorer` holds the `Scorer` interface, the
table of scorers by name and what every scorer shares (SelectionPolicy, SkillMatch);
`ranking` the ranking of scored slots; one module per scorer (`lexical`, `bm25f`, `semantic`,
`hybrid`, with `embedding` for the model and `intent` for hybrid's quick-question probe);
`quick` a warm `select` from a saved scorer state; `overlap` rival skills (SK704); routing
tests (`queries`) and their evaluation. Imports stages 0-4."""
