"""The editor front: `venice-agent acp`, the agent over the Agent Client Protocol."""
