"""Stage 7, assist: editor-agnostic help computed from a parsed document and a position
(completions, hovers, the outline, the catalog cost) and new skills from a template. Plain data in
and out; the language server turns it into LSP types. Imports stages 0-6."""
