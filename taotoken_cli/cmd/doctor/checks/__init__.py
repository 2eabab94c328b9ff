"""Doctor checks, one module per section. Each module registers its checks on import."""
