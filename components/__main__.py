import gc
import sys

# A plan is a one-shot process. The provider SDKs define ~100k classes on import, and the cyclic
# collector's repeated passes over them cost about a third of the plan's wall time while freeing
# nothing; peak memory is the same without them (see benchmarks/README.md).
gc.disable()

from components.cli import main  # noqa: E402

sys.exit(main())
