from pi_context.cli import main

raise SystemExit(main())
