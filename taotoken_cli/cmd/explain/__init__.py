"""`taotoken explain`: a failure code (later: a status or a server's message) -> cause and fix."""
