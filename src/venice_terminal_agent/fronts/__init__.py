"""How a person or a program reaches the agent: each front is a package of its own (DESIGN.md §3)."""
