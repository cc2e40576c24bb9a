"""An ordinary aiogram 3 bot (its own routers package, an FSM form, a throttling middleware,
an LLM handler with the openai SDK) with bot-memory added. Every line that is about memory is
marked `# memory`."""
