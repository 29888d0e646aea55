"""metrics.jsonl (verl's file-logger format) read and write, shared by both engines, the report and the job wrapper."""
