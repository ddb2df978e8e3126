"""One module per benchmark family; ``selfplay.evaluate.registry`` names them."""
