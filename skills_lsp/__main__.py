from skills_lsp.cli import main

raise SystemExit(main())
