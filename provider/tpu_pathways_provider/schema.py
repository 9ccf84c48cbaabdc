"""`python -m tpu_pathways_provider.schema`: the package schema the plugin serves, as the
committed ``provider/schema.json`` holds it (indented, keys sorted)."""

import json

from tpu_pathways_provider import provider


def render() -> str:
    return json.dumps(json.loads(provider().schema), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
