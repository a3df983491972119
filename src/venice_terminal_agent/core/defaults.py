"""Every default named once. Code, help texts and the manual (docs/) refer to these names; a default
that changes here changes everywhere. (Pure: no imports, so the loop core may use it.)"""

APP_NAME = "venice-agent"  # the folders it keeps its files in (config, data, cache)
PAGE_CHARS = 20_000  # a result longer than this is cut into pages (MAX_TOOL_RESULT_CHARS)
PLAN_BUDGET = 5  # tool calls of a run when neither the caller nor the plan says (`run_loop`, `run`)
QUESTION_BUDGET = 10  # tool calls per question of the LLM agent (`--budget`)
MAX_ROUNDS = 12  # model requests per question (`MAX_ROUNDS`, `--max-rounds`)
CALLS_PER_WINDOW = 5  # the bot's tool calls per chat in any rolling window (`--calls`)
WINDOW_SECONDS = 3600.0  # the bot's rolling window
VENICE_BASE_URL = "https://api.venice.ai/api/v1"  # the model server (`VENICE_BASE_URL`, `--base-url`)
APIFY_MCP_URL = "https://mcp.apify.com"  # Apify's hosted MCP server (`APIFY_MCP_URL`)
MCP_CALL_TIMEOUT = 300.0  # seconds an MCP tool call may take before it ends with that reason
MCP_LIST_CACHE_HOURS = 24.0  # a server's cached tool list may open a one-shot question this long
COMPACT_AT = 0.8  # compact when the next request would pass this share of the window (`COMPACT_AT`)
KEEP_TURNS = 2  # the last user turns a compaction keeps whole
PAGE_SHARE = 0.1  # a page of a long result takes at most this share of the model's window
# Tool search (docs/tools.md, "Tool search for big catalogues"): a big catalogue is searched instead of sent whole.
TOOL_SEARCH_TOOLS = 40  # more tools than this are searched when the model's window is unknown
TOOL_SEARCH_SHARE = 0.10  # schemas taking more than this share of a known window are searched
TOOL_SEARCH_TOP_K = 5  # tools one search_tools call finds at most
# USD one web search may cost, counted in the money cap before a request that may search
# (`--web-search on|auto`) when /models gives no price of its own (`pricing.web_search`).
# Venice's reference states a per-search charge for xAI's native search (~$0.01/search); its
# own search's price is not in /models, so the same figure is taken, on the safe side.
WEB_SEARCH_USD = 0.01
# Under a money cap, without MAX_COMPLETION_TOKENS, each request asks for no more output tokens
# than the money left can pay after its worst-case input, nor more than the model's own limit,
# or this many when the model publishes none (no Venice text model does): docs/models.md, "The
# money cap".
CAPPED_OUTPUT_TOKENS = 8192
# ... and a request whose money left cannot pay this many (a short answer, a tool call) after
# its worst-case input is not made: the question ends `cost_cap`.
CAPPED_OUTPUT_MIN = 64
