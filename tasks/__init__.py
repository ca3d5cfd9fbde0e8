"""tasks"""

if __name__ != "evoci.tasks":  # the folder is on sys.path (e.g. a test run from the repository root)
    raise ImportError(f"import evoci.tasks, not {__name__}: this folder is installed as evoci.tasks, and a second "
                      "copy of its modules would hold a second copy of every flow, task and setting")

