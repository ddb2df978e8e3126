"""Source programs for the games: packaged data for the default, downloads for paper scale."""
