"""Stage 2, parse: text to documents that keep a position for everything (the frontmatter parser,
Markdown references, adk-skill's exact parser, the tool manifest). Problems are recorded, never
raised. Imports stages 0-1."""
