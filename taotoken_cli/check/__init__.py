"""`taotoken check`: one fast request that says "works" or names the failure and its fix."""
