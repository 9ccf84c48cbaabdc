"""The plugin's entry point: Pulumi runs `python <this directory> <engine address>`.

It serves the components of ``tpu_pathways_provider`` over gRPC and prints only the port it
listens on (the engine reads it from stdout): nothing else here may print.
"""

from tpu_pathways_provider import serve

if __name__ == "__main__":
    serve()
