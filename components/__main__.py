import sys

from components.cli import main

sys.exit(main())
