"""Stage 3, rules: documents to findings. `registry` is the rule table (every code, its
severity, profiles, fixes and documentation); one module per rule group registers its rules there;
`validate` runs them over one document, `check` over whole workspaces with a cache. Importing this
package registers every rule group. Imports stages 0-2."""

from skills_lsp.core.rules import (
    body,
    description,
    fields,
    loaders,
    name,
    structure,
    suppress,
    tools,
    workspace,
)
from skills_lsp.core.rules.registry import GROUPS, RULES, Report, Rule, RuleContext, rule

__all__ = ["GROUPS", "RULES", "Report", "Rule", "RuleContext", "rule"]

_ = (body, description, fields, loaders, name, structure, suppress, tools, workspace)
