from clarisql.cli import main

raise SystemExit(main())
