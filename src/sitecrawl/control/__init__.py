"""Where a crawl goes: scope, include/exclude rules, rewrites, trap guard."""
