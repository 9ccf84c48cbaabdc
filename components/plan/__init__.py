"""The offline plan: run the Pulumi program under the mock engine and report what it registers."""
