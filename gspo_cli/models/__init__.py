"""Models and tokenizers shared by training and eval: loading, the built-in tiny model, device choice, verl
checkpoint export to HF folders."""
