"""taotoken's own configuration: the one loader every command uses (`loader`), where a value comes from
(`origins`), editing the file's text (`edit`), changing a value everywhere it is copied (`update`: `config set`,
`config sync`) and showing it (`view`). The loader's public names are re-exported here."""

from taotoken_cli.core.settings.loader import (
    DEFAULT_PROFILE,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_CONFIG,
    ENV_MODEL,
    ENV_PROFILE,
    FIELDS,
    LABELS,
    Origin,
    Overrides,
    Settings,
    Value,
    clean_value,
    config_dir,
    config_path,
    load_settings,
    profile_table,
    read_config_file,
    toml_error_position,
    tomllib,
    user_config_dir,
)

__all__ = ["DEFAULT_PROFILE", "ENV_API_KEY", "ENV_BASE_URL", "ENV_CONFIG", "ENV_MODEL", "ENV_PROFILE", "FIELDS",
           "LABELS", "Origin", "Overrides", "Settings", "Value", "clean_value", "config_dir", "config_path",
           "load_settings", "profile_table", "read_config_file", "toml_error_position", "tomllib", "user_config_dir"]
