"""Dataset sources, verl's row schema and `gspo prepare-data`."""
