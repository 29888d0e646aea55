"""Configuration: the preset schema (the only home of defaults), preset loading (`extends`, `--set`), the catalog."""
