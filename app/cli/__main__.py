from attnlens.app.cli.main import main

raise SystemExit(main())
