"""taotoken: set up and diagnose access to the TaoToken LLM gateway."""

__version__ = "0.1.0"
DEFAULT_BASE_URL = "https://taotoken.net/api"
APP_NAME = "taotoken"
