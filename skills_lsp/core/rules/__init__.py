"""The rule table. Importing this package registers every rule group."""

from skills_lsp.core.rules import body, description, fields, loaders, name, structure, tools, workspace
from skills_lsp.core.rules.registry import GROUPS, RULES, Report, Rule, RuleContext, rule

__all__ = ["GROUPS", "RULES", "Report", "Rule", "RuleContext", "rule"]

_ = (body, description, fields, loaders, name, structure, tools, workspace)
