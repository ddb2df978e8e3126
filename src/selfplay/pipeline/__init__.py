"""What each workflow step does, as plain functions over files (Snakemake-free, testable)."""
