"""The library: pure Python, no editor, CLI or ADK code. Data flows one way through its stages,
and a module imports only from its own stage or a lower one (tests/test_architecture.py checks):

0. `model`, `errors`, `schema`: the shared vocabulary (positions, findings, fixes, error kinds,
   the JSON Schemas).
1. `files`: which files (discovery, crate-exact and workspace-wide) and which settings (config).
2. `parse`: text to documents with positions (frontmatter, Markdown references, the crate's
   parser, the tool manifest).
3. `rules`: documents to findings (the rule registry, profiles, per-file and workspace checks,
   the check cache).
4. `index`: skills as the engine sees them (SkillDocument, SkillIndex, incremental updates).
5. `routing`: requests to skills (the selection policy, one module per scorer behind one
   `Scorer` interface, routing tests, evaluation).
6. `engine`: what the agent is given (the catalog, prompt injection, the ContextCoordinator).
7. `assist`: editor-agnostic help (completion, hover, outline, scaffolding).
8. `workspace`: one folder put together (config checked against every name the stages above
   define, index, tool manifest, test queries, scorers warmed up).

`server/`, `cli/` and `adk/` are thin layers over these; no stage imports them.
"""
