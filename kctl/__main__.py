from kctl.entry import main

main()
