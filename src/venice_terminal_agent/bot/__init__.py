"""The chat bot: `Bot.respond(text, chat)`, its command planner, and the terminal agent's
runs kept in the store (`RecordingAgent`)."""
