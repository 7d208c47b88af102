from kctl.cli import main

main()
