"""Built-in presets (YAML). This folder ships in the wheel as the data package `gspo_cli.builtin_presets`."""
