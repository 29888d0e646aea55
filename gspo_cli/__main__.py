from gspo_cli.cli import main

main()
