"""Pinned container images: their Apptainer definitions, the registry of image
references the workflow's rules run in, and a checker that every definition pins
what it installs (base image by digest, downloads by checksum, exact versions)."""
