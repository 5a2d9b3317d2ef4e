"""Parsing pages: HTML -> record fields (pure), the parser processes, word count."""
