"""What is wrong with a crawled site: rows, findings, the link check."""
