"""One module per command: options, the Typer function (thin), and the call into the core."""
