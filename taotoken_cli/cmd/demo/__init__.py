"""`taotoken demo`: every command, for real, against the local mock gateway in a throwaway HOME."""
