"""Per-host politeness slots: in-process, and shared through Redis."""
