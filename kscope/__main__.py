from kscope.cli import main

raise SystemExit(main())
