"""Stage 6, engine: what the agent is given: the `<available_skills>` catalog, adk-skill's prompt
injection and its ContextCoordinator. Imports stages 0-5."""
