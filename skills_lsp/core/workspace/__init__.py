"""Stage 8, workspace: one folder put together for the CLI, the server and the ADK bridge: its
config checked against every name the stages define (profiles, rule codes, scorers), and, as
they come, its index, tool manifest, test queries and warmed-up scorers. Imports stages 0-7."""
